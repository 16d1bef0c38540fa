/**
 * Rate limits (issue 19 item 5): the in-process limiter of the embedded default counts per process
 * and forgets a window once it passed; the Redis limiter (RATE_LIMIT_REDIS_URL) is one count for
 * every process sharing the Redis: two limiters (two clients, as two API processes have) allow the
 * limit once, not twice, and so do two whole services answering POST /auth/login.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { DomainError } from '../../domain/shared/decider.js';
import { RateLimiter } from '../../infra/rate-limiter/memory.js';
import { RedisRateLimiter } from '../../infra/rate-limiter/redis.js';
import { TestClock } from '../support/clock.js';
import { call } from '../support/http.js';
import { startTestService, waitUntil, type TestService } from '../support/test-service.js';

async function outcome(attempt: Promise<void>): Promise<'ok' | number> {
  try {
    await attempt;
    return 'ok';
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code).to.equal('RATE_LIMITED');
    expect((err as DomainError).kind).to.equal('rate_limited');
    return ((err as DomainError).details as { retryAfterSeconds: number }).retryAfterSeconds;
  }
}

describe('rate limiter: in-process (embedded default)', () => {
  it('allows the limit per window, then RATE_LIMITED with the seconds left; a new window starts afresh', async () => {
    const clock = new TestClock();
    const limiter = new RateLimiter(clock);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await outcome(limiter.hit('k', 3, 60_000)));
    expect(results).to.deep.equal(['ok', 'ok', 'ok', 60]);
    clock.advance(45_000);
    expect(await outcome(limiter.hit('k', 3, 60_000))).to.equal(15);
    expect(await outcome(limiter.hit('other', 3, 60_000))).to.equal('ok');
    clock.advance(15_000);
    expect(await outcome(limiter.hit('k', 3, 60_000))).to.equal('ok');
    await limiter.reset('k');
    for (let i = 0; i < 3; i++) expect(await outcome(limiter.hit('k', 3, 60_000))).to.equal('ok');
  });

  it('fuzzing finding: a hit left un-awaited past the limit does not end the process (no unhandled rejection)', async () => {
    const limiter = new RateLimiter(new TestClock());
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      for (let i = 0; i < 3; i++) void limiter.hit('floating', 1, 60_000);
      // Negative check without a clock: the limiter settles in microtasks, and Node reports unhandled
      // rejections once they have drained, so one turn of the event loop is enough.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).to.deep.equal([]);
      // Awaited, the same refusal arrives.
      expect(await outcome(limiter.hit('floating', 1, 60_000))).to.be.a('number');
    } finally {
      process.off('unhandledRejection', listener);
    }
  });

  it('counts per process: two in-process limiters each allow the limit (why the distributed configuration needs Redis)', async () => {
    const a = new RateLimiter(new TestClock());
    const b = new RateLimiter(new TestClock());
    let allowed = 0;
    for (let i = 0; i < 4; i++) for (const limiter of [a, b]) if ((await outcome(limiter.hit('k', 3, 60_000))) === 'ok') allowed++;
    expect(allowed).to.equal(6);
  });
});

const redisUrl = process.env.REDIS_URL;
if (!redisUrl && process.env.REQUIRE_SERVERS === 'true') throw new Error('REDIS_URL is required when REQUIRE_SERVERS=true');
if (!redisUrl) console.log('SKIP rate limiter on Redis: REDIS_URL is not set (bash .ci/servers.sh start)');

if (redisUrl) {
  describe('rate limiter: Redis (RATE_LIMIT_REDIS_URL)', function () {
    this.timeout(60_000);
    const prefix = `test:rl:${randomBytes(4).toString('hex')}`;
    let a: RedisRateLimiter;
    let b: RedisRateLimiter;
    before(async () => {
      a = await RedisRateLimiter.connect(redisUrl, prefix);
      b = await RedisRateLimiter.connect(redisUrl, prefix);
    });
    after(async () => {
      await a?.close();
      await b?.close();
    });

    it('two limiters sharing Redis allow the limit once, not twice', async () => {
      const results: Array<'ok' | number> = [];
      for (let i = 0; i < 5; i++) for (const limiter of [a, b]) results.push(await outcome(limiter.hit('login:ip:192.0.2.1', 4, 60_000)));
      expect(results.filter((r) => r === 'ok')).to.have.length(4);
      const refused = results.filter((r): r is number => r !== 'ok');
      expect(refused).to.have.length(6);
      for (const seconds of refused) expect(seconds).to.be.within(1, 60);
      // Other keys and other limits are counted apart.
      expect(await outcome(b.hit('login:ip:192.0.2.2', 4, 60_000))).to.equal('ok');
      expect(await outcome(b.hit('login:ip:192.0.2.1', 100, 60_000))).to.equal('ok');
    });

    it('attempts made at once from both processes still total the limit (atomic in Redis)', async () => {
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => outcome((i % 2 ? a : b).hit('burst', 7, 60_000))));
      expect(results.filter((r) => r === 'ok')).to.have.length(7);
    });

    it('reset forgets the count everywhere; the window expires in Redis', async () => {
      for (let i = 0; i < 2; i++) await a.hit('r', 2, 1_000);
      expect(await outcome(b.hit('r', 2, 1_000))).to.equal(1);
      await b.reset('r');
      expect(await outcome(a.hit('r', 2, 1_000))).to.equal('ok');
      await a.hit('r', 2, 1_000);
      expect(await outcome(a.hit('r', 2, 1_000))).to.be.a('number');
      // Redis keeps the window on its own clock: ask until it has expired there (a refused hit does not extend a fixed window).
      await waitUntil('the 1 s window to expire in Redis', async () => (await outcome(b.hit('r', 2, 1_000))) === 'ok', 5_000);
    });

    it('two services sharing the Redis answer 429 on POST /auth/login after the limit in total', async () => {
      const env = { RATE_LIMIT_REDIS_URL: redisUrl, RATE_LIMIT_REDIS_PREFIX: `${prefix}:svc`, RATE_LIMIT_AUTH_PER_MINUTE: '3' };
      const services: TestService[] = [await startTestService('embedded', env), await startTestService('embedded', env)];
      try {
        expect(services[0]!.services.rateLimiter.adapter).to.equal('redis');
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) {
          for (const svc of services) {
            const res = await call(svc.baseUrl, 'POST', '/auth/login', { email: 'nobody@example.com', password: 'wrong password' });
            statuses.push(res.status);
            if (res.status === 429) {
              expect(res.body.error.code).to.equal('RATE_LIMITED');
              expect(Number(res.headers.get('retry-after'))).to.be.within(1, 60);
            }
          }
        }
        expect(statuses.filter((s) => s === 401)).to.have.length(3);
        expect(statuses.filter((s) => s === 429)).to.have.length(5);
      } finally {
        for (const svc of services) await svc.stop();
      }
    });
  });
}
