import { randomUUID } from 'node:crypto';
import { acknowledgeProbe } from '../commands/probes.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Consumer } from '../ports/bus.js';
import type { EventStore } from '../ports/event-store.js';

/**
 * Reacts to ProbeCreated by recording ProbeAcknowledged through a command, like every worker:
 * it proves that the bus (embedded or Kafka) delivers events to the worker role.
 */
export function probeAcknowledger(eventStore: EventStore, workerId: string, now: () => Date): Consumer {
  return {
    name: 'probe-acknowledger',
    categories: ['probe'],
    async handle(event: RecordedEvent) {
      if (event.type !== 'ProbeCreated') return;
      await acknowledgeProbe(
        eventStore,
        {
          actorId: null,
          orgId: event.metadata.orgId,
          workspaceId: event.metadata.workspaceId,
          correlationId: event.metadata.correlationId,
          causationId: event.id,
          requestId: randomUUID(),
          now: now(),
        },
        event.streamId.slice('probe-'.length),
        workerId,
      );
    },
  };
}
