/**
 * 8b. Async runs through Kafka (distributed test service: log → relay → Kafka → run worker): N runs
 * enqueued over the API, timed until all are completed in the read model.
 */
import type { ProcessDoc } from '../../projections/runs.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { BENCH, chainFlow, registerBenchUser } from './runs.js';
import { latency, now, type Report } from './support.js';

export interface AsyncRunBenchOptions {
  concurrency: number;
  /** Async runs enqueued through Kafka. */
  asyncRuns: number;
}

export const defaults: AsyncRunBenchOptions = { concurrency: 16, asyncRuns: 64 };

export async function benchRunsAsync(report: Report, o: AsyncRunBenchOptions = defaults): Promise<void> {
  await benchKafka(report, o);
}

/** Async runs through Kafka: enqueue over the API of a distributed service, wait until all completed. */
async function benchKafka(report: Report, o: AsyncRunBenchOptions) {
  const name = `async runs through Kafka (${o.asyncRuns} × 2-node flow)`;
  if (!process.env.KAFKA_BROKERS || !process.env.MONGODB_URL) {
    report.skip(BENCH, name, 'KAFKA_BROKERS and MONGODB_URL are not set', undefined, 'runs/s');
    return;
  }
  const service = await startTestService('distributed', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
  try {
    const user = await registerBenchUser(service.baseUrl);
    const flowId = await chainFlow(service.baseUrl, user, 2);
    // One warm-up run, so topic creation and consumer-group joins are not timed.
    const warm = await call(service.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'warm' }, async: true }, user.auth);
    await completedCount(service, flowId, 1, 60_000);
    if (warm.status !== 202) throw new Error(`async run answered ${warm.status}: ${warm.text}`);
    const started = now();
    let next = 0;
    const enqueueLatencies: number[] = [];
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (next++ < o.asyncRuns) {
          const t0 = now();
          const res = await call(service.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'bench' }, async: true }, user.auth);
          if (res.status !== 202) throw new Error(`async run answered ${res.status}: ${res.text}`);
          enqueueLatencies.push(now() - t0);
        }
      }),
    );
    const enqueued = now() - started;
    await completedCount(service, flowId, o.asyncRuns + 1, 60_000);
    const total = now() - started;
    report.figure(BENCH, `${name}: enqueue → all completed`, (o.asyncRuns / total) * 1000, 'runs/s', { note: `${o.asyncRuns} runs in ${(total / 1000).toFixed(2)} s; enqueueing alone took ${(enqueued / 1000).toFixed(2)} s` });
    report.figure(BENCH, `${name}: 202 answer p50`, latency(enqueueLatencies).p50, 'ms', { digits: 2 });
  } finally {
    await service.stop();
  }
}

async function completedCount(service: TestService, flowId: string, expected: number, timeoutMs: number) {
  const processes = service.services.readStore.collection<ProcessDoc>('processes');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const docs = await processes.find({ flowId, status: { $in: ['completed', 'failed', 'stopped'] } });
    if (docs.length >= expected) {
      const bad = docs.filter((d) => d.status !== 'completed');
      if (bad.length) throw new Error(`${bad.length} async runs ended ${bad[0].status}`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`only ${docs.length} of ${expected} async runs finished within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
