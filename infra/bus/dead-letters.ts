import { randomUUID } from 'node:crypto';
import { recordDeadLetter } from '../../commands/operations-dead-letters.js';
import type { DeadLetter, DeadLetterSink } from '../ports/dead-letters.js';
import type { EventStore } from '../ports/event-store.js';

/** Dead letters go to the log as `deadletter-<id>` streams (commands/dead-letters.ts), whichever bus. */
export function eventStoreDeadLetters(eventStore: EventStore, now: () => Date): DeadLetterSink {
  return {
    async record(letter: DeadLetter) {
      const { event } = letter;
      await recordDeadLetter(
        eventStore,
        { actorId: null, orgId: null, workspaceId: null, correlationId: event.metadata.correlationId, causationId: event.id, requestId: randomUUID(), now: now() },
        { ...letter, event: { id: event.id, type: event.type, streamId: event.streamId, revision: event.revision, position: event.position } },
      );
    },
  };
}

/**
 * The dead-letter metric of this process: letters recorded per consumer since start (a counter,
 * as a Prometheus counter would be). Shown in the bus's health detail; the durable, cluster-wide
 * counts are in GET /admin/dead-letters.
 */
export class CountingDeadLetters implements DeadLetterSink {
  private readonly counts = new Map<string, number>();

  constructor(private readonly inner: DeadLetterSink) {}

  async record(letter: DeadLetter): Promise<void> {
    await this.inner.record(letter);
    this.counts.set(letter.consumer, (this.counts.get(letter.consumer) ?? 0) + 1);
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** `; dead letters recorded here: a=1, b=2`, or nothing while there are none. */
  detail(): string {
    const entries = Object.entries(this.snapshot());
    return entries.length ? `; dead letters recorded here: ${entries.map(([c, n]) => `${c}=${n}`).join(', ')}` : '';
  }
}
