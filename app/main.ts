import { createServer, type Server } from 'node:http';
import { createApp } from '../api/app.js';
import { answerClientErrors } from '../api/middleware/client-errors.js';
import { allRoutes } from '../api/routes/index.js';
import { healthRoutes } from '../api/routes/health.js';
import { metricsRoutes } from '../api/routes/metrics.js';
import { allConsumers } from '../consumers/index.js';
import { traced } from '../consumers/traced.js';
import { startRunRecovery, type RunRecovery } from '../consumers/runs-recovery.js';
import { startRunRetention } from '../consumers/runs-retention.js';
import { startObjectSweep } from './object-sweep.js';
import { evalRunPorts } from '../api/routes/evals.js';
import { startEvaluationResume } from '../consumers/evals.js';
import { runningEvaluations } from '../projections/evals.js';
import { orgRunRetentions, runRetentionQueries } from '../projections/runs-retention.js';
import { deadLetterRetrier } from '../consumers/operations-dead-letters.js';
import { ConfigError, loadConfig, parseRole } from '../infra/config/index.js';
import { buildServices, closeServices } from './container.js';
import { createLogger } from '../infra/logger/pino.js';
import { startTracing } from '../infra/telemetry/tracing.js';
import type { RunningConsumer } from '../ports/bus.js';

/** Starts the roles asked for; `all` (the default) is the whole service in one process. */
async function main() {
  let config, role;
  try {
    config = loadConfig();
    role = parseRole(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  const logger = createLogger(config.LOG_LEVEL);
  // Before anything else, so the first request and the first consumed event are traced.
  const tracing = startTracing(config, role, logger);
  const services = await buildServices(config, role, logger);
  const runsWorkers = role === 'all' || role === 'worker';

  await services.projections.start();
  const consumers: RunningConsumer[] = [];
  let recovery: RunRecovery | undefined;
  let retention: { stop(): Promise<void> } | undefined;
  let objectSweep: { stop(): Promise<void> } | undefined;
  let evaluationResume: { stop(): void } | undefined;
  if (runsWorkers) {
    services.bus.startRelay?.();
    const workerId = `${role}:${process.pid}`;
    const handlers = allConsumers(services, workerId).map(traced);
    // The retrier re-delivers dead letters to these same handlers (POST /admin/dead-letters/{id}/retry).
    const retrier = deadLetterRetrier({ eventStore: services.eventStore, logger: services.logger, now: services.now }, workerId, handlers);
    for (const consumer of [...handlers, retrier]) consumers.push(await services.bus.start(consumer));
    recovery = await startRunRecovery(
      { eventStore: services.eventStore, clock: { now: services.now }, logger: services.logger, runs: services.runs, queries: services.runRecovery, settings: config, consumers: handlers.map((c) => c.name) },
      `${role}:${process.pid}`,
      role,
    );
    retention = startRunRetention(
      {
        eventStore: services.eventStore,
        clock: { now: services.now },
        logger: services.logger,
        queries: runRetentionQueries(services.readStore),
        orgRetentions: () => orgRunRetentions(services.readStore),
        defaults: { keepDays: config.RUN_HISTORY_KEEP_DAYS, keepLast: config.RUN_HISTORY_KEEP_LAST },
      },
      config.RUN_HISTORY_SWEEP_MS,
    );
    objectSweep = startObjectSweep(
      { eventStore: services.eventStore, objects: services.objects, logger: services.logger, now: services.now, graceMs: config.OBJECT_ORPHAN_GRACE_MS },
      config.OBJECT_SWEEP_INTERVAL_MS,
    );
    // Evaluations whose runner died with its process go on here once its lease ran out (consumers/evals.ts).
    evaluationResume = startEvaluationResume(
      { ...evalRunPorts(services), work: services.evaluations, running: () => runningEvaluations(services.readStore), heartbeatMs: config.WORKER_HEARTBEAT_MS },
      services.runs.localWorkerId,
      60_000,
    );
  }

  // Roles without the API still answer /api/health so an orchestrator can probe them, and /api/metrics… so each process can be scraped.
  const servesApi = role === 'all' || role === 'api';
  const app = createApp(services, servesApi ? allRoutes : [...healthRoutes, ...metricsRoutes]);
  const server: Server = answerClientErrors(createServer(app.callback()));
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info({ role, port, eventStore: services.eventStore.adapter, readStore: services.readStore.adapter, bus: services.bus.adapter }, 'started');
  // One plain line for scripts and tests that wait for readiness.
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port })}\n`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutdown timed out');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    // Stop accepting, let in-flight requests finish, then stop consumers (they store checkpoints).
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await recovery?.stop();
    await retention?.stop();
    await objectSweep?.stop();
    evaluationResume?.stop();
    for (const consumer of consumers) await consumer.stop();
    await closeServices(services);
    await tracing.shutdown();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
