/** Counts attempts per key (adapter: `infra/rate-limiter.ts`, fixed windows in this process's memory). */
export interface RateLimiter {
  /** Counts one attempt for `key`; past `limit` in `windowMs` throws RATE_LIMITED with the seconds to wait. */
  hit(key: string, limit: number, windowMs: number): void;
  reset(key: string): void;
}
