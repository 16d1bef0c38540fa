/**
 * Counts attempts per key. Adapters: `infra/rate-limiter/memory.ts` (fixed windows in this process's
 * memory: the embedded default) and `infra/rate-limiter/redis.ts` (rate-limiter-flexible on Redis:
 * one count for every API process sharing the Redis, set with RATE_LIMIT_REDIS_URL).
 */
export interface RateLimiter {
  readonly adapter: 'memory' | 'redis';
  /** Counts one attempt for `key`; past `limit` in `windowMs` rejects with RATE_LIMITED (details.retryAfterSeconds). */
  hit(key: string, limit: number, windowMs: number): Promise<void>;
  /** Forgets the attempts counted for `key` (every window). */
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}
