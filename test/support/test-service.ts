import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createApp } from '../../api/app.js';
import { answerClientErrors } from '../../api/middleware/client-errors.js';
import { allRoutes } from '../../api/routes/index.js';
import { allConsumers } from '../../consumers/index.js';
import { KafkaBus } from '../../infra/bus/kafka.js';
import { loadConfig } from '../../infra/config/index.js';
import { buildServices, closeServices } from '../../app/container.js';
import { createLogger } from '../../infra/logger/pino.js';
import type { Consumer, RunningConsumer } from '../../ports/bus.js';
import { deadLetterRetrier } from '../../consumers/operations-dead-letters.js';
import { executeWorkerCommand } from '../../commands/workers.js';
import type { Clock } from '../../ports/clock.js';
import type { Services } from '../../ports/services.js';

/** Waiting for a condition (test/support/wait.ts), here too because most tests import it from here. */
export { waitUntil } from './wait.js';

export type Mode = 'embedded' | 'distributed';

export interface TestService {
  baseUrl: string;
  services: Services;
  stop(): Promise<void>;
}

/** Which modes this run can test: distributed needs the servers of .ci/servers.sh. */
export function availableModes(): Mode[] {
  const distributed = Boolean(process.env.MONGODB_URL && process.env.KAFKA_BROKERS);
  if (!distributed && process.env.REQUIRE_SERVERS === 'true') {
    throw new Error('MONGODB_URL and KAFKA_BROKERS are required when REQUIRE_SERVERS=true');
  }
  if (!distributed) console.log('SKIP distributed mode: MONGODB_URL and KAFKA_BROKERS are not set');
  return distributed ? ['embedded', 'distributed'] : ['embedded'];
}

/** Environment for one isolated service: its own data dir, database and topic prefix. */
export function isolatedEnv(mode: Mode, extra: Record<string, string> = {}): Record<string, string> {
  const id = randomBytes(4).toString('hex');
  // PUBLIC_EVENTS off unless a test asks: each tenant's public topic is a Kafka topic, and a suite of distributed tests would create hundreds.
  const env: Record<string, string> = { DATA_DIR: mkdtempSync(join(tmpdir(), 'flowsvc-')), LOG_LEVEL: 'silent', PORT: '0', PUBLIC_EVENTS: 'false', ...extra };
  if (mode === 'distributed') {
    env.MONGODB_URL = process.env.MONGODB_URL!;
    env.MONGODB_DB = `test_${id}`;
    env.KAFKA_BROKERS = process.env.KAFKA_BROKERS!;
    env.KAFKA_TOPIC_PREFIX = `test-${id}`;
    // Rate limits held across processes, as deployed: counters in Redis under this service's own prefix.
    if (process.env.REDIS_URL) {
      env.RATE_LIMIT_REDIS_URL = process.env.REDIS_URL;
      env.RATE_LIMIT_REDIS_PREFIX = `test-${id}:rl`;
    }
  }
  if (process.env.EVENTSTORE_URL && mode === 'distributed') env.EVENTSTORE_URL = process.env.EVENTSTORE_URL;
  return env;
}

/** The whole service (API, projections, consumers) in this process, on a random loopback port. */
export async function startTestService(
  mode: Mode,
  extra: Record<string, string> = {},
  options: { logSink?: { write(line: string): void }; clock?: Clock; consumers?: Consumer[]; withoutConsumers?: string[] } = {},
): Promise<TestService> {
  const env = isolatedEnv(mode, extra);
  const config = loadConfig(env);
  const services = await buildServices(config, 'all', createLogger(config.LOG_LEVEL, options.logSink), { clock: options.clock });
  await services.projections.start();
  if (services.bus instanceof KafkaBus) services.bus.startRelay();
  const consumers: RunningConsumer[] = [];
  // `options.consumers`: test-only consumers, run and retried (dead letters) like the real ones.
  // `options.withoutConsumers`: names of real consumers this service does not run (a worker that is not there).
  const skipped = new Set(options.withoutConsumers ?? []);
  const handlers = [...allConsumers(services, 'test-worker').filter((c) => !skipped.has(c.name)), ...(options.consumers ?? [])];
  const retrier = deadLetterRetrier({ eventStore: services.eventStore, logger: services.logger, now: services.now }, 'test-worker', handlers);
  for (const consumer of [...handlers, retrier]) consumers.push(await services.bus.start(consumer));
  const presence = await announceTestWorker(services, handlers.map((c) => c.name));
  const server: Server = answerClientErrors(createServer(createApp(services, allRoutes).callback()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}/api`,
    services,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await presence.stop();
      for (const consumer of consumers) await consumer.stop();
      await closeServices(services);
      rmSync(env.DATA_DIR, { recursive: true, force: true });
    },
  };
}

/**
 * The test service's worker presence, as a worker process keeps it (consumers/runs-recovery.ts):
 * it announces the consumers it runs, so a dead-letter retry finds a worker that takes it. It
 * announces a beat interval of a day and never beats: a beat is an event, and tests that assert a
 * refused request appended nothing compare the log's head before and after. Its own id, so
 * recovery tests never take it for a worker holding runs.
 */
const TEST_WORKER_BEAT_MS = 24 * 3_600_000;

async function announceTestWorker(services: Services, consumerNames: string[]): Promise<{ stop(): Promise<void> }> {
  const workerId = `test-service:${process.pid}:${randomBytes(4).toString('hex')}`;
  const context = () => ({ actorId: null, orgId: null, workspaceId: null, correlationId: randomBytes(8).toString('hex'), causationId: null, requestId: null, now: services.now() });
  await executeWorkerCommand(services.eventStore, context(), workerId, { type: 'StartWorker', workerId, host: 'test-service', pid: process.pid, role: 'all', heartbeatMs: TEST_WORKER_BEAT_MS, consumers: consumerNames });
  return {
    async stop() {
      await executeWorkerCommand(services.eventStore, context(), workerId, { type: 'StopWorker' }).catch(() => undefined);
    },
  };
}
