import { DomainError } from '../domain/shared/decider.js';
import { probeDecider, probeStreamId } from '../domain/probes/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, type CommandContext } from './handle.js';
import { claimReservation } from './reservations.js';

export async function createProbe(store: EventStore, context: CommandContext, probeId: string, name: string) {
  try {
    await claimReservation(store, context, 'probe-name', name.toLowerCase(), probeId);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'ALREADY_TAKEN') {
      throw new DomainError('PROBE_NAME_TAKEN', `a probe named "${name}" already exists`, 'conflict', { field: 'body.name' });
    }
    throw err;
  }
  return handleAtContextTime(store, context, probeStreamId(probeId), probeDecider, { type: 'CreateProbe', probeId, name });
}

export async function incrementProbe(store: EventStore, context: CommandContext, probeId: string, by: number, expectedRevision?: number) {
  return handleAtContextTime(store, context, probeStreamId(probeId), probeDecider, { type: 'IncrementProbe', by }, expectedRevision);
}

export async function acknowledgeProbe(store: EventStore, context: CommandContext, probeId: string, by: string) {
  return handleAtContextTime(store, context, probeStreamId(probeId), probeDecider, { type: 'AcknowledgeProbe', by });
}
