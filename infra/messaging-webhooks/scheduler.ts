import type { DeliveryTimers } from '../../ports/messaging-webhooks.js';

/**
 * The per-process timer wheel of webhook attempts: one timer per delivery armed for its next
 * attempt, and at most `concurrency` attempts in flight (the rest wait in arrival order). It holds
 * no truth: every attempt re-reads its delivery's stream, so a stale or repeated arming is harmless,
 * and a lost one (crash) is found again by the sweep (consumers/messaging-webhooks-sweep.ts).
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class DeliveryScheduler implements DeliveryTimers {
  private readonly armed = new Map<string, { timer: NodeJS.Timeout; dueAt: number }>();
  private readonly inFlight = new Set<string>();
  /** Armings asked for while the delivery's attempt was running: applied when it ends. */
  private readonly rearm = new Map<string, number>();
  private queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private closed = false;

  constructor(
    private readonly attempt: (deliveryId: string, signal: AbortSignal) => Promise<void>,
    private readonly concurrency: number,
    private readonly onError: (deliveryId: string, err: unknown) => void,
  ) {}

  /** Arms the delivery for `dueAt` (at once when past); an earlier arming already in place wins. */
  schedule(deliveryId: string, dueAt: Date | number): void {
    if (this.closed) return;
    const due = typeof dueAt === 'number' ? dueAt : dueAt.getTime();
    if (this.inFlight.has(deliveryId)) {
      const pending = this.rearm.get(deliveryId);
      this.rearm.set(deliveryId, pending === undefined ? due : Math.min(pending, due));
      return;
    }
    if (this.queued.has(deliveryId)) return;
    const existing = this.armed.get(deliveryId);
    if (existing && existing.dueAt <= due) return;
    if (existing) clearTimeout(existing.timer);
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, due - Date.now()));
    if (delay === 0) {
      this.armed.delete(deliveryId);
      this.enqueue(deliveryId);
      return;
    }
    const timer = setTimeout(() => {
      this.armed.delete(deliveryId);
      this.enqueue(deliveryId);
    }, delay);
    timer.unref();
    this.armed.set(deliveryId, { timer, dueAt: due });
  }

  /** Whether this process already holds the delivery (armed, queued or in flight). */
  holds(deliveryId: string): boolean {
    return this.armed.has(deliveryId) || this.queued.has(deliveryId) || this.inFlight.has(deliveryId);
  }

  stats() {
    return { armed: this.armed.size, queued: this.queue.length, inFlight: this.inFlight.size };
  }

  /** Disarms every timer, aborts attempts in flight (they record nothing) and waits for them. */
  async close(): Promise<void> {
    this.closed = true;
    for (const { timer } of this.armed.values()) clearTimeout(timer);
    this.armed.clear();
    this.queue = [];
    this.queued.clear();
    this.rearm.clear();
    this.abort.abort();
    await Promise.allSettled([...this.running]);
  }

  private enqueue(deliveryId: string) {
    if (this.closed || this.queued.has(deliveryId) || this.inFlight.has(deliveryId)) return;
    this.queued.add(deliveryId);
    this.queue.push(deliveryId);
    this.pump();
  }

  private pump() {
    while (!this.closed && this.inFlight.size < this.concurrency && this.queue.length > 0) {
      const deliveryId = this.queue.shift()!;
      this.queued.delete(deliveryId);
      this.inFlight.add(deliveryId);
      const run: Promise<void> = this.attempt(deliveryId, this.abort.signal)
        .catch((err) => this.onError(deliveryId, err))
        .finally(() => {
          this.inFlight.delete(deliveryId);
          this.running.delete(run);
          const again = this.rearm.get(deliveryId);
          if (again !== undefined) {
            this.rearm.delete(deliveryId);
            this.schedule(deliveryId, again);
          }
          this.pump();
        });
      this.running.add(run);
    }
  }
}
