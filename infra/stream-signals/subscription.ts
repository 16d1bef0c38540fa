import { DomainError } from '../../domain/shared/decider.js';
import type { EventStore, EventSubscription } from '../../ports/event-store.js';
import type { Logger } from '../../ports/logger.js';
import type { AppendWatch, StreamSignals } from '../../ports/stream-signals.js';

interface Watcher {
  fired: boolean;
  wake: (() => void) | null;
}

/**
 * One live subscription to the log (started on the first watch, from the head) that marks the
 * watchers of each appended event's stream. A watch also wakes every `fallbackMs` so a waiter
 * never depends on the subscription alone (it starts lazily, and can lag behind another process).
 */
export function createStreamSignals(options: { eventStore: EventStore; categories: string[]; maxWaiters: number; logger: Logger; fallbackMs?: number }): StreamSignals {
  const { eventStore, categories, maxWaiters, logger } = options;
  const fallbackMs = options.fallbackMs ?? 5_000;
  const byStream = new Map<string, Set<Watcher>>();
  let count = 0;
  let subscription: EventSubscription | null = null;
  let starting: Promise<void> | null = null;
  let closed = false;

  function start() {
    starting ??= (async () => {
      const after = await eventStore.headPosition();
      if (closed) return;
      const sub = eventStore.subscribe({ after, categories });
      subscription = sub;
      void (async () => {
        try {
          for await (const event of sub) {
            const set = byStream.get(event.streamId);
            if (!set) continue;
            for (const w of set) {
              w.fired = true;
              w.wake?.();
            }
          }
        } catch (err) {
          if (!closed) logger.warn({ err }, 'stream signals subscription ended; waiters fall back to polling');
          subscription = null;
          starting = null;
        }
      })();
    })().catch((err) => {
      logger.warn({ err }, 'stream signals could not subscribe; waiters fall back to polling');
      starting = null;
    });
  }

  return {
    get waiting() {
      return count;
    },
    watch(streamId: string): AppendWatch {
      if (count >= maxWaiters) {
        throw new DomainError('TOO_MANY_WAITERS', `this server holds ${maxWaiters} waiting requests already; retry shortly`, 'unavailable', { limit: maxWaiters });
      }
      if (!closed) start();
      const watcher: Watcher = { fired: false, wake: null };
      let set = byStream.get(streamId);
      if (!set) byStream.set(streamId, (set = new Set()));
      set.add(watcher);
      count++;
      let open = true;
      return {
        next(ms, signal) {
          if (watcher.fired || !open || signal?.aborted) {
            const fired = watcher.fired;
            watcher.fired = false;
            return Promise.resolve(fired);
          }
          return new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => done(false), Math.max(0, Math.min(ms, fallbackMs)));
            const onAbort = () => done(false);
            function done(fired: boolean) {
              clearTimeout(timer);
              signal?.removeEventListener('abort', onAbort);
              watcher.wake = null;
              const was = watcher.fired || fired;
              watcher.fired = false;
              resolve(was);
            }
            watcher.wake = () => done(true);
            signal?.addEventListener('abort', onAbort, { once: true });
          });
        },
        close() {
          if (!open) return;
          open = false;
          watcher.wake?.();
          const s = byStream.get(streamId);
          s?.delete(watcher);
          if (s && s.size === 0) byStream.delete(streamId);
          count--;
        },
      };
    },
    async close() {
      closed = true;
      for (const set of byStream.values()) for (const w of set) w.wake?.();
      await starting;
      await subscription?.close();
    },
  };
}
