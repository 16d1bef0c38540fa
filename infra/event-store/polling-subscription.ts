import type { RecordedEvent } from '../../domain/shared/events.js';
import type { EventSubscription } from '../../ports/event-store.js';

interface Source {
  after: number;
  read(after: number): Promise<RecordedEvent[]>;
  /** Registers a wake-up signal for new appends; returns the unregister function. */
  onAppend(listener: () => void): () => void;
  pollMs: number;
  /** The most `read` returns at once: a shorter batch means the log is drained. */
  batchSize: number;
}

/**
 * Catch-up then live over any store that can read its log from a position: reads batches until
 * empty, then sleeps until an append signal or the poll interval, whichever comes first.
 * Iteration pulls one event at a time, so a slow consumer holds back reading (backpressure).
 */
export function pollingSubscription(source: Source): EventSubscription {
  let closed = false;
  let wake: (() => void) | null = null;
  // Set by every append signal, so one that lands between a read and the sleep is not lost.
  let signalled = false;
  const unregister = source.onAppend(() => {
    signalled = true;
    wake?.();
  });

  async function* iterate(): AsyncGenerator<RecordedEvent> {
    let after = source.after;
    try {
      while (!closed) {
        signalled = false;
        const batch = await source.read(after);
        for (const event of batch) {
          if (closed) return;
          after = event.position;
          yield event;
        }
        // A full batch may have more behind it; a short one drained the log, so sleep unless an
        // append arrived meanwhile (saves one empty read per wake-up).
        if (batch.length === source.batchSize || closed || signalled) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, source.pollMs);
          function done() {
            clearTimeout(timer);
            wake = null;
            resolve();
          }
          wake = done;
        });
      }
    } finally {
      unregister();
    }
  }

  const iterator = iterate();
  return {
    [Symbol.asyncIterator]: () => iterator,
    async close() {
      closed = true;
      unregister(); // the generator's finally never runs if iteration never started
      wake?.();
      await iterator.return(undefined);
    },
  };
}
