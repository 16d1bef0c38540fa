import { z } from 'zod';
import { DomainError, type Decider } from '../shared/decider.js';

/**
 * The probe is the platform's own small aggregate: it exercises command handling, uniqueness
 * through a reservation, projection and read-your-writes end to end (smoke tests, benchmarks,
 * and operators checking a deployment), without depending on any business context.
 */
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

export type ProbeCommand =
  | { type: 'CreateProbe'; probeId: string; name: string; at: string }
  | { type: 'IncrementProbe'; by: number; at: string }
  /** Issued by the worker's consumer: proves the bus delivered ProbeCreated. Idempotent. */
  | { type: 'AcknowledgeProbe'; by: string; at: string };

export interface ProbeState {
  exists: boolean;
  name: string | null;
  value: number;
  acknowledged: boolean;
}

export const probeDecider: Decider<ProbeCommand, ProbeState, ProbeEvent> = {
  initialState: { exists: false, name: null, value: 0, acknowledged: false },
  eventSchemas: probeEventSchemas,
  evolve(state, event) {
    switch (event.type) {
      case 'ProbeCreated':
        return { exists: true, name: event.data.name, value: 0, acknowledged: false };
      case 'ProbeIncremented':
        return { ...state, value: state.value + event.data.by };
      case 'ProbeAcknowledged':
        return { ...state, acknowledged: true };
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'CreateProbe':
        if (state.exists) throw new DomainError('PROBE_EXISTS', `probe ${command.probeId} already exists`, 'conflict');
        return [{ type: 'ProbeCreated', data: { probeId: command.probeId, name: command.name, createdAt: command.at } }];
      case 'IncrementProbe':
        if (!state.exists) throw new DomainError('PROBE_NOT_FOUND', 'probe not found', 'not_found');
        if (command.by === 0) return [];
        return [{ type: 'ProbeIncremented', data: { by: command.by, at: command.at } }];
      case 'AcknowledgeProbe':
        if (!state.exists) throw new DomainError('PROBE_NOT_FOUND', 'probe not found', 'not_found');
        if (state.acknowledged) return [];
        return [{ type: 'ProbeAcknowledged', data: { by: command.by, at: command.at } }];
    }
  },
};

export const probeStreamId = (probeId: string) => `probe-${probeId}`;
