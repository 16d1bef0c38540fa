import type { EventStore } from '../ports/event-store.js';

/**
 * One writer at a time per stream, per process. Commands on one stream that meet in this process
 * (300 signals to one workflow, a run's executor beside its API) queue here instead of racing to
 * the same expected revision and refusing each other with CONCURRENCY_CONFLICT: the next command
 * decides on the state the previous one appended. Only writers in other processes can still move
 * the stream under a decision; the handler retries those.
 *
 * The queue is a promise chain per stream; a stream with nothing queued holds no entry. A failed
 * command does not stop the ones queued behind it.
 */
// Keyed by the service's event store, so two services in one process (tests) never share a queue.
const tails = new WeakMap<EventStore, Map<string, Promise<unknown>>>();

export function oneWriterPerStream<T>(store: EventStore, streamId: string, work: () => Promise<T>): Promise<T> {
  let byStream = tails.get(store);
  if (!byStream) tails.set(store, (byStream = new Map()));
  const previous = byStream.get(streamId);
  const mine = previous ? previous.then(work, work) : work();
  // What the next writer waits for: this command's end, never its error.
  const tail = mine.then(
    () => undefined,
    () => undefined,
  );
  byStream.set(streamId, tail);
  void tail.then(() => {
    if (byStream.get(streamId) === tail) byStream.delete(streamId);
  });
  return mine;
}

/** Streams with a command in flight or queued in this process (tests, diagnostics). */
export function streamsBeingWritten(store: EventStore): number {
  return tails.get(store)?.size ?? 0;
}
