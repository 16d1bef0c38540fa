// Dead letters recorded in the log: the sink wires an adapter port to a command, so it belongs to the composition root.
import { randomUUID } from 'node:crypto';
import { recordDeadLetter, recordUndecodableMessage } from '../commands/operations-dead-letters.js';
import type { DeadLetter, DeadLetterSink } from '../ports/dead-letters.js';
import type { EventStore } from '../ports/event-store.js';

/** Dead letters go to the log as `deadletter-<id>` streams (commands/operations-dead-letters.ts), whichever bus. */
export function eventStoreDeadLetters(eventStore: EventStore, now: () => Date): DeadLetterSink {
  return {
    async record(letter: DeadLetter) {
      if (letter.kind === 'undecodable') {
        // No event, so no correlation to carry: the letter starts its own.
        const context = { actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: randomUUID(), now: letter.at };
        const { kind: _kind, at: _at, ...record } = letter;
        await recordUndecodableMessage(eventStore, context, record);
        return;
      }
      const { event } = letter;
      await recordDeadLetter(
        eventStore,
        { actorId: null, orgId: null, workspaceId: null, correlationId: event.metadata.correlationId, causationId: event.id, requestId: randomUUID(), now: now() },
        { ...letter, event: { id: event.id, type: event.type, streamId: event.streamId, revision: event.revision, position: event.position } },
      );
    },
  };
}
