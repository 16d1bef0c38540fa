import { z } from 'zod';

export const probeNameSchema = z.string().trim().min(1).max(100);

export const probeEventSchemas = {
  ProbeCreated: z.object({ probeId: z.string(), name: probeNameSchema, createdAt: z.string() }),
  ProbeIncremented: z.object({ by: z.number().int(), at: z.string() }),
  ProbeAcknowledged: z.object({ by: z.string(), at: z.string() }),
};

export type ProbeEvent =
  | { type: 'ProbeCreated'; data: z.infer<typeof probeEventSchemas.ProbeCreated> }
  | { type: 'ProbeIncremented'; data: z.infer<typeof probeEventSchemas.ProbeIncremented> }
  | { type: 'ProbeAcknowledged'; data: z.infer<typeof probeEventSchemas.ProbeAcknowledged> };

export const probeStreamId = (probeId: string) => `probe-${probeId}`;
