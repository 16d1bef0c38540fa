import { DomainError } from '../shared/decider.js';
import type { ProbeEvent } from './events.js';
import type { ProbeState } from './state.js';

export type ProbeCommand =
  | { type: 'CreateProbe'; probeId: string; name: string; at: string }
  | { type: 'IncrementProbe'; by: number; at: string }
  /** Issued by the worker's consumer: proves the bus delivered ProbeCreated. Idempotent. */
  | { type: 'AcknowledgeProbe'; by: string; at: string };

export function decideProbe(command: ProbeCommand, state: ProbeState): ProbeEvent[] {
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
}
