import { DomainError } from '../domain/shared/decider.js';
import { systemClock, type Clock } from './ports/clock.js';
import type { RateLimiter as RateLimiterPort } from './ports/rate-limiter.js';

/**
 * Fixed-window counters in this process's memory. Limits are per API process: behind a load
 * balancer with N API processes a client can make up to N times the limit (README, limits).
 */
export class RateLimiter implements RateLimiterPort {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly clock: Clock = systemClock) {}

  /** Counts one attempt for `key`; past `limit` in `windowMs` throws 429 with the seconds to wait. */
  hit(key: string, limit: number, windowMs: number): void {
    const now = this.clock.now().getTime();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
      if (this.windows.size > 100_000) this.sweep(now);
    }
    window.count += 1;
    if (window.count > limit) {
      const retryAfterSeconds = Math.max(1, Math.ceil((window.resetAt - now) / 1000));
      throw new DomainError('RATE_LIMITED', `too many attempts; retry in ${retryAfterSeconds} s`, 'rate_limited', { retryAfterSeconds });
    }
  }

  reset(key: string): void {
    this.windows.delete(key);
  }

  private sweep(now: number) {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}
