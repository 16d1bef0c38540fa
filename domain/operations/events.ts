import { z } from 'zod';

/**
 * Operational commands on the platform itself, recorded like everything else: a projection rebuild
 * is requested by an API process and carried out by whichever process runs that projector, so the
 * request travels as an event (stream `projection-<name>`) and the audit log shows who asked.
 */
export const operationEventSchemas = {
  ProjectionRebuildRequested: z.object({ name: z.string(), requestId: z.string(), requestedAt: z.string() }),
  ProjectionRebuilt: z.object({ name: z.string(), requestId: z.string(), events: z.number().int(), durationMs: z.number().int(), at: z.string() }),
  ProjectionRebuildFailed: z.object({ name: z.string(), requestId: z.string(), reason: z.string(), at: z.string() }),
};

export type OperationEvent =
  | { type: 'ProjectionRebuildRequested'; data: z.infer<typeof operationEventSchemas.ProjectionRebuildRequested> }
  | { type: 'ProjectionRebuilt'; data: z.infer<typeof operationEventSchemas.ProjectionRebuilt> }
  | { type: 'ProjectionRebuildFailed'; data: z.infer<typeof operationEventSchemas.ProjectionRebuildFailed> };

export const projectionStreamId = (name: string) => `projection-${name}`;
