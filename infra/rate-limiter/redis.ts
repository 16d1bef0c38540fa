import { createClient } from 'redis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../../ports/logger.js';
import type { RateLimiter as RateLimiterPort } from '../../ports/rate-limiter.js';
import { guarded, rateLimited } from './memory.js';

type RedisClient = ReturnType<typeof createClient>;

/**
 * Rate limits shared by every process using the same Redis (rate-limiter-flexible's
 * RateLimiterRedis: one atomic INCR + PEXPIRE script per attempt, fixed windows). One limiter per
 * (limit, window) pair, its keys under `<prefix>:<limit>/<windowMs>:`. While Redis does not answer,
 * each process falls back to counting in its own memory (the library's insurance limiter) rather
 * than refusing or waving everyone through.
 */
export class RedisRateLimiter implements RateLimiterPort {
  readonly adapter = 'redis' as const;
  private readonly limiters = new Map<string, RateLimiterRedis>();

  private constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {}

  static async connect(url: string, prefix: string, logger?: Logger): Promise<RedisRateLimiter> {
    const client: RedisClient = createClient({ url, socket: { connectTimeout: 5_000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 5_000) } });
    client.on('error', (err: Error) => logger?.warn({ err: err.message }, 'rate limiter: Redis unavailable (counting in this process meanwhile)'));
    await client.connect();
    return new RedisRateLimiter(client, prefix);
  }

  private limiter(limit: number, windowMs: number): RateLimiterRedis {
    const id = `${limit}/${windowMs}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const duration = Math.max(1, Math.ceil(windowMs / 1000));
      limiter = new RateLimiterRedis({
        storeClient: this.client,
        useRedisPackage: true,
        rejectIfRedisNotReady: true,
        keyPrefix: `${this.prefix}:${id}`,
        points: limit,
        duration,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${this.prefix}:${id}:insurance`, points: limit, duration }),
      });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  hit(key: string, limit: number, windowMs: number): Promise<void> {
    return guarded(
      this.limiter(limit, windowMs)
        .consume(key, 1)
        .then(
          () => undefined,
          (err: unknown) => {
            if (err instanceof RateLimiterRes) throw rateLimited(Math.max(1, Math.ceil(err.msBeforeNext / 1000)));
            throw err;
          },
        ),
    );
  }

  async reset(key: string): Promise<void> {
    await Promise.all([...this.limiters.values()].map((limiter) => limiter.delete(key)));
  }

  async close(): Promise<void> {
    if (this.client.isOpen) await this.client.quit().catch(() => this.client.destroy());
  }
}
