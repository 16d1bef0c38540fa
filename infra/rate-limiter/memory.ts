import { DomainError } from '../../domain/shared/decider.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import type { RateLimiter as RateLimiterPort } from '../../ports/rate-limiter.js';

/**
 * The answer of `hit`, with a handler attached: awaited, it rejects as usual; left un-awaited by
 * mistake, a refusal is lost instead of being an unhandled rejection that ends the process.
 */
export function guarded<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

export const rateLimited = (retryAfterSeconds: number) =>
  new DomainError('RATE_LIMITED', `too many attempts; retry in ${retryAfterSeconds} s`, 'rate_limited', { retryAfterSeconds });

/**
 * Fixed-window counters in this process's memory (the embedded default: one process). With several
 * API processes set RATE_LIMIT_REDIS_URL (infra/rate-limiter/redis.ts), or each process counts alone
 * and N processes allow N times the limit. Time comes from the clock, so tests move it.
 */
export class RateLimiter implements RateLimiterPort {
  readonly adapter = 'memory' as const;
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly clock: Clock = systemClock) {}

  hit(key: string, limit: number, windowMs: number): Promise<void> {
    try {
      this.count(key, limit, windowMs);
      return Promise.resolve();
    } catch (err) {
      return guarded(Promise.reject(err));
    }
  }

  private count(key: string, limit: number, windowMs: number): void {
    const now = this.clock.now().getTime();
    const id = `${limit}/${windowMs}:${key}`;
    let window = this.windows.get(id);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(id, window);
      if (this.windows.size > 100_000) this.sweep(now);
    }
    window.count += 1;
    if (window.count > limit) throw rateLimited(Math.max(1, Math.ceil((window.resetAt - now) / 1000)));
  }

  async reset(key: string): Promise<void> {
    for (const id of this.windows.keys()) if (id.slice(id.indexOf(':') + 1) === key) this.windows.delete(id);
  }

  async close(): Promise<void> {
    this.windows.clear();
  }

  private sweep(now: number) {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}
