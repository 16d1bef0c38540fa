/**
 * Handles one partition's batch with up to `concurrency` streams at once: messages of one key
 * (one stream) stay in order, one at a time; messages of different keys overlap. Offsets are
 * resolved in partition order only, up to the first message not yet handled, so a crash or a
 * rebalance redelivers from there (at least once, as with one handler at a time).
 *
 * Why: kafkajs fetches a partition's next batch only after the previous one was handled, and a
 * handler that awaits a store round trip per message made a whole consumer group as slow as one
 * await chain on a busy event loop (issue 29: run claims waited seconds behind each other).
 */
export interface KeyedMessage {
  key: string;
  offset: string;
}

export interface KeyedBatchOptions<M extends KeyedMessage> {
  messages: M[];
  /** Most keys handled at once (1: one message at a time, in offset order). */
  concurrency: number;
  /** Handles one message; resolves `false` to stop the batch (stopping, rebalance): nothing later is started. */
  handle(message: M): Promise<boolean>;
  /** Called in offset order with each offset whose message and every earlier one were handled. */
  resolve(offset: string): void;
  /** Called after every handled message, e.g. the consumer's heartbeat and offset commit. */
  afterEach?(): Promise<void>;
}

/** Resolves when every started message finished; `true` when the whole batch was handled. */
export async function handleKeyedBatch<M extends KeyedMessage>(o: KeyedBatchOptions<M>): Promise<boolean> {
  const lanes = new Map<string, M[]>();
  for (const m of o.messages) {
    const lane = lanes.get(m.key);
    if (lane) lane.push(m);
    else lanes.set(m.key, [m]);
  }
  // One at a time keeps the exact offset order, as before concurrency existed.
  const queue = o.concurrency <= 1 ? o.messages.map((m) => [m]) : [...lanes.values()];
  const handled = new Set<M>();
  let next = 0; // index in o.messages of the first message not yet resolved
  let stopped = false;

  const advance = () => {
    while (next < o.messages.length && handled.has(o.messages[next])) o.resolve(o.messages[next++].offset);
  };
  const worker = async () => {
    for (let lane = queue.shift(); lane && !stopped; lane = queue.shift()) {
      for (const m of lane) {
        if (stopped) return;
        if (!(await o.handle(m))) {
          stopped = true;
          return;
        }
        handled.add(m);
        advance();
        await o.afterEach?.();
      }
    }
  };
  const workers = Math.max(1, Math.min(o.concurrency, queue.length));
  // A worker's failure (an exception from handle) must not leave the others running unseen.
  const results = await Promise.allSettled(Array.from({ length: workers }, worker));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return !stopped && next === o.messages.length;
}
