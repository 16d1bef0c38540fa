import { randomUUID } from 'node:crypto';
import { deadLetterState, recordDeadLetterRetry } from '../commands/operations-dead-letters.js';
import { DEAD_LETTER_CATEGORY, type DeadLetterEvent } from '../domain/operations/dead-letters.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Consumer } from '../ports/bus.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';

export interface DeadLetterRetrierPorts {
  eventStore: EventStore;
  logger: Logger;
  now(): Date;
}

/**
 * Carries out `POST /admin/dead-letters/{id}/retry` in a worker, where the consumers' handlers
 * live: on DeadLetterRetryRequested it reads the failed event from the log, calls that consumer's
 * handler once, and records DeadLetterResolved or DeadLetterRetryFailed. `consumers` are the
 * handlers of this process (every worker runs all of them); a request for a consumer this process
 * does not run is left to the process that does.
 */
export function deadLetterRetrier(ports: DeadLetterRetrierPorts, workerId: string, consumers: Consumer[], name = 'dead-letter-retrier'): Consumer {
  const byName = new Map(consumers.map((c) => [c.name, c]));
  const log = ports.logger.child({ consumer: name });
  return {
    name,
    categories: [DEAD_LETTER_CATEGORY],
    async handle(recorded: RecordedEvent) {
      const event = recorded as RecordedEvent & DeadLetterEvent;
      if (event.type !== 'DeadLetterRetryRequested') return;
      const { deadLetterId, requestId } = event.data;
      const { state } = await deadLetterState(ports.eventStore, deadLetterId);
      // Answered already: this request is a redelivery.
      if (!state.pending.includes(requestId) || !state.event || !state.consumer) return;
      const target = byName.get(state.consumer);
      if (!target) return;
      const [failed] = await ports.eventStore.readStream(state.event.streamId, { fromRevision: state.event.revision, maxCount: 1 });
      let error: string | undefined;
      if (!failed || failed.id !== state.event.id) error = `event ${state.event.id} is no longer in the log`;
      else {
        try {
          await target.handle(failed);
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
        }
      }
      const context = { actorId: null, orgId: null, workspaceId: null, correlationId: recorded.metadata.correlationId, causationId: recorded.id, requestId: randomUUID(), now: ports.now() };
      await recordDeadLetterRetry(ports.eventStore, context, deadLetterId, requestId, workerId, error);
      const where = { deadLetterId, deadLetterConsumer: state.consumer, eventId: state.event.id, type: state.event.type, streamId: state.event.streamId };
      if (error === undefined) log.info(where, 'dead letter retried: handled; resolved');
      else log.warn({ ...where, error }, 'dead letter retried: failed again; recorded');
    },
  };
}
