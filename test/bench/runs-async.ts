/**
 * 8b. Async runs through Kafka (distributed test service: log → relay → Kafka → run worker): N runs
 * enqueued over the API (202 once durable in the log), timed until every one is completed in its
 * own stream (what GET /processes/{id} shows), then until the processes read model caught up.
 */
import { createServer } from 'node:http';
import os from 'node:os';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { BENCH, chainFlow, registerBenchUser } from './runs.js';
import { serverCpu } from './server-cpu.js';
import { latency, now, profileWindow, type Report } from './support.js';

export interface AsyncRunBenchOptions {
  concurrency: number;
  /** Async runs enqueued through Kafka. */
  asyncRuns: number;
}

export const defaults: AsyncRunBenchOptions = {
  concurrency: Number(process.env.BENCH_ASYNC_CONCURRENCY ?? 16),
  asyncRuns: Number(process.env.BENCH_ASYNC_RUNS ?? 600),
};

/** Issue 18's aims for this path. */
const AIM_RUNS_PER_SECOND = 300;
const AIM_202_P99_MS = 25;
/** Issue 29's aims for dispatch: an idle worker claims a requested run within this long. */
const AIM_CLAIM_P50_MS = 10;
const AIM_CLAIM_P99_MS = 50;

export async function benchRunsAsync(report: Report, o: AsyncRunBenchOptions = defaults): Promise<void> {
  await benchFootprint(report);
  await benchKafka(report, o);
}

/**
 * The capacity model's inputs (docs/capacity.md): events and bytes one run leaves in the log, per
 * flow shape and per node kind. Bytes are the Kafka message value (the whole RecordedEvent as JSON,
 * what the relay publishes and a consumer parses); the SQLite row holds about the same.
 */
async function benchFootprint(report: Report) {
  const hook = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"echo":"a small JSON answer"}'));
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/hook`;
  const service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ALLOW_PRIVATE_NETWORK: 'true' });
  try {
    const user = await registerBenchUser(service.baseUrl);
    const footprint = async (processId: string) => {
      const events = await service.services.eventStore.readStream(`run-${processId}`);
      const bytesOf = (list: typeof events) => list.reduce((sum, e) => sum + Buffer.byteLength(JSON.stringify(e)), 0);
      const nodeEvents = events.filter((e) => e.type.startsWith('Node'));
      return { events: events.length, bytes: bytesOf(events), types: events.map((e) => e.type), nodeEvents: nodeEvents.length, nodeBytes: bytesOf(nodeEvents) };
    };
    const runOf = async (flowId: string) => {
      const res = await call(service.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'capacity' } }, user.auth);
      if (res.status !== 200 || res.body.status !== 'completed') throw new Error(`run answered ${res.status}: ${res.text.slice(0, 300)}`);
      return footprint(res.body.processId);
    };
    for (const n of [2, 50]) {
      const f = await runOf(await chainFlow(service.baseUrl, user, n));
      report.figure(BENCH, `footprint: ${n}-node linear run (transform/llm alternating), events`, f.events, 'events', { note: `${f.types.filter((t) => !t.startsWith('Node')).join(', ')} + node events` });
      report.figure(BENCH, `footprint: ${n}-node linear run, bytes in the log`, f.bytes, 'bytes', { note: `${Math.round(f.bytes / f.events)} bytes per event` });
    }
    // One node of each kind: the run's bytes minus those of an empty run's lifecycle (RunRequested of a 1-node flow, RunStarted, RunCompleted).
    const kinds: Array<[string, Record<string, unknown>]> = [
      ['transform', { nodeType: 'transform', template: 'topic {{inputs.topic}}' }],
      ['llm (offline provider)', { nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'summarize {{inputs.topic}} in a few words' }],
      ['webhook', { nodeType: 'webhook', webhookConfig: { url: hookUrl, method: 'POST' } }],
      ['condition', { nodeType: 'transform', template: 'cats', conditions: [{ operator: 'contains', value: 'cats', targetNodeId: null }] }],
      ['delay (10 ms)', { nodeType: 'delay', delayMs: 10 }],
    ];
    for (const [kind, data] of kinds) {
      const created = await call(service.baseUrl, 'POST', '/flows', { name: `kind ${kind}` }, user.auth);
      const flowId = created.body.flow.id as string;
      const put = await call(service.baseUrl, 'PUT', `/flows/${flowId}`, { name: `kind ${kind}`, nodes: [{ id: 'k', type: 'custom', position: { x: 0, y: 0 }, data }], edges: [] }, user.auth);
      if (put.status !== 200) throw new Error(`PUT flow answered ${put.status}: ${put.text.slice(0, 300)}`);
      const f = await runOf(flowId);
      report.figure(BENCH, `footprint: one ${kind} node, bytes of its node events`, f.nodeBytes, 'bytes', { note: `${f.nodeEvents} node events; the whole 1-node run: ${f.events} events, ${f.bytes} bytes` });
    }
  } finally {
    await service.stop();
    hook.close();
  }
}

/** Async runs through Kafka: enqueue over the API of a distributed service, wait until all completed. */
async function benchKafka(report: Report, o: AsyncRunBenchOptions) {
  const name = `async runs through Kafka + MongoDB-wire (${o.asyncRuns} × 2-node flow, c=${o.concurrency})`;
  if (!process.env.KAFKA_BROKERS || !process.env.MONGODB_URL) {
    report.skip(BENCH, name, 'KAFKA_BROKERS and MONGODB_URL are not set', undefined, 'runs/s');
    return;
  }
  const service = await startTestService('distributed', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ...(process.env.DURABILITY ? { DURABILITY: process.env.DURABILITY } : {}) });
  const finished = watchFinishedRuns(service);
  try {
    const user = await registerBenchUser(service.baseUrl);
    const flowId = await chainFlow(service.baseUrl, user, 2);
    // One warm-up run, so topic creation and consumer-group joins are not timed.
    const warm = await call(service.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'warm' }, async: true }, user.auth);
    if (warm.status !== 202) throw new Error(`async run answered ${warm.status}: ${warm.text}`);
    await finished.waitFor([warm.body.processId], 60_000);
    await benchIdleDispatch(report, name, service, flowId, user.auth, finished);
    const processIds: string[] = [];
    const profile = await profileWindow();
    const cpu0 = process.cpuUsage();
    const servers = serverCpu();
    const started = now();
    let next = 0;
    const enqueueLatencies: number[] = [];
    const body = JSON.stringify({ inputs: { topic: 'bench' }, async: true });
    const headers = { ...user.auth, 'content-type': 'application/json' };
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (next++ < o.asyncRuns) {
          const t0 = now();
          // Plain fetch: the OpenAPI check of call() would put the client's CPU into the server's latency.
          const res = await fetch(`${service.baseUrl}/flows/${flowId}/run`, { method: 'POST', headers, body });
          const text = await res.text();
          if (res.status !== 202) throw new Error(`async run answered ${res.status}: ${text}`);
          enqueueLatencies.push(now() - t0);
          processIds.push(JSON.parse(text).processId);
        }
      }),
    );
    const enqueued = now() - started;
    await finished.waitFor(processIds, 120_000);
    const total = now() - started;
    const cpu = process.cpuUsage(cpu0);
    const serversMs = servers.stop();
    await profile.stop();
    const head = await service.services.eventStore.headPosition();
    const caughtUp = await service.services.projections.waitFor(head, 'run-bench', 120_000);
    const projected = now() - started;
    const stages = await stageLatencies(service, processIds);
    const l = latency(enqueueLatencies);
    report.figure(BENCH, `${name}: enqueue → all completed`, (o.asyncRuns / total) * 1000, 'runs/s', {
      target: { op: '>=', value: AIM_RUNS_PER_SECOND },
      note: `${o.asyncRuns} runs in ${(total / 1000).toFixed(2)} s (completed in their streams); enqueueing alone took ${(enqueued / 1000).toFixed(2)} s`,
    });
    report.figure(BENCH, `${name}: 202 answer p50`, l.p50, 'ms', { digits: 2 });
    report.figure(BENCH, `${name}: 202 answer p99`, l.p99, 'ms', { digits: 2, target: { op: '<=', value: AIM_202_P99_MS }, note: `max ${l.max.toFixed(1)} ms` });
    report.figure(BENCH, `${name}: enqueue → processes read model caught up`, caughtUp ? (o.asyncRuns / projected) * 1000 : 0, 'runs/s', {
      note: caughtUp ? `${(projected / 1000).toFixed(2)} s (lists are eventually consistent; GET /processes/{id} reads the run's stream)` : 'projections did not catch up within 120 s',
    });
    report.figure(BENCH, `${name}: CPU per run (API, relay, worker, projectors and client in one process)`, (cpu.user + cpu.system) / 1000 / o.asyncRuns, 'ms', {
      digits: 1,
      note: `${(((cpu.user + cpu.system) / 1000 / total) * 100).toFixed(0)} % of one core while timed; Kafka and the MongoDB-wire server not counted`,
    });
    const serversTotal = Object.values(serversMs).reduce((a, b) => a + b, 0);
    if (serversTotal > 0) {
      const serviceMs = (cpu.user + cpu.system) / 1000;
      const cores = ((serviceMs + serversTotal) / o.asyncRuns) * AIM_RUNS_PER_SECOND / 1000;
      report.figure(BENCH, `${name}: CPU per run of the servers (Kafka, MongoDB-wire server and its PostgreSQL)`, serversTotal / o.asyncRuns, 'ms', {
        digits: 1,
        note: `${Object.entries(serversMs).map(([server, ms]) => `${server} ${(ms / o.asyncRuns).toFixed(1)}`).join(', ')} ms; service + servers at ${AIM_RUNS_PER_SECOND} runs/s would need ${cores.toFixed(1)} cores (this machine: ${os.cpus().length}, shared with the client)`,
      });
    }
    report.figure(BENCH, `${name}: requested → claimed by the worker p50`, stages.queued.p50, 'ms', { digits: 1, target: { op: '<=', value: AIM_CLAIM_P50_MS }, note: 'relay + Kafka + run worker\'s claim' });
    report.figure(BENCH, `${name}: requested → claimed by the worker p99`, stages.queued.p99, 'ms', { digits: 1, target: { op: '<=', value: AIM_CLAIM_P99_MS } });
    report.figure(BENCH, `${name}: claimed → completed p50`, stages.executed.p50, 'ms', { digits: 1, note: `p99 ${stages.executed.p99.toFixed(0)} ms: the run's execution on the worker` });
  } finally {
    finished.close();
    await service.stop();
  }
}

/**
 * Dispatch to an idle worker: runs requested one at a time, a little apart, so that what is timed
 * is the path (API append → relay → Kafka → claim), not a queue behind a saturated process.
 */
async function benchIdleDispatch(report: Report, name: string, service: TestService, flowId: string, auth: Record<string, string>, finished: ReturnType<typeof watchFinishedRuns>) {
  const runs = Number(process.env.BENCH_IDLE_DISPATCH_RUNS ?? 100);
  const gapMs = 20;
  const ids: string[] = [];
  const headers = { ...auth, 'content-type': 'application/json' };
  const body = JSON.stringify({ inputs: { topic: 'idle' }, async: true });
  for (let i = 0; i < runs; i++) {
    const res = await fetch(`${service.baseUrl}/flows/${flowId}/run`, { method: 'POST', headers, body });
    const text = await res.text();
    if (res.status !== 202) throw new Error(`async run answered ${res.status}: ${text}`);
    ids.push(JSON.parse(text).processId);
    await new Promise((r) => setTimeout(r, gapMs));
  }
  await finished.waitFor(ids, 60_000);
  const { queued } = await stageLatencies(service, ids);
  const label = name.replace(/\(.*\)/, `(${runs} runs one at a time, ${gapMs} ms apart)`);
  report.figure(BENCH, `${label}: requested → claimed by an idle worker p50`, queued.p50, 'ms', { digits: 1, target: { op: '<=', value: AIM_CLAIM_P50_MS }, note: 'relay + Kafka + claim, nothing queued' });
  report.figure(BENCH, `${label}: requested → claimed by an idle worker p99`, queued.p99, 'ms', { digits: 1, target: { op: '<=', value: AIM_CLAIM_P99_MS } });
}

/** Follows the log's run category and remembers which runs finished (RunCompleted, RunFailed, …). */
function watchFinishedRuns(service: TestService) {
  const done = new Map<string, string>();
  const waiters = new Set<() => void>();
  const subscription = service.services.eventStore.subscribe({ after: 0, categories: ['run'] });
  void (async () => {
    for await (const event of subscription) {
      if (event.type === 'RunCompleted' || event.type === 'RunFailed' || event.type === 'RunStopped' || event.type === 'RunTimedOut') {
        done.set(event.streamId.slice('run-'.length), event.type);
        for (const wake of waiters) wake();
      }
    }
  })();
  return {
    async waitFor(processIds: string[], timeoutMs: number) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const missing = processIds.filter((id) => !done.has(id));
        if (missing.length === 0) break;
        if (Date.now() > deadline) throw new Error(`only ${processIds.length - missing.length} of ${processIds.length} async runs finished within ${timeoutMs / 1000} s`);
        await new Promise<void>((resolve) => {
          const wake = () => (waiters.delete(wake), clearTimeout(timer), resolve());
          const timer = setTimeout(wake, 200);
          waiters.add(wake);
        });
      }
      const bad = processIds.filter((id) => done.get(id) !== 'RunCompleted');
      if (bad.length) throw new Error(`${bad.length} async runs ended ${done.get(bad[0])}`);
    },
    close: () => void subscription.close(),
  };
}

/** From each run's stream: RunRequested → RunStarted (claimed) → RunCompleted, by their occurredAt. */
async function stageLatencies(service: TestService, processIds: string[]) {
  const queued: number[] = [];
  const executed: number[] = [];
  for (const id of processIds) {
    const events = await service.services.eventStore.readStream(`run-${id}`);
    const at = (type: string) => Date.parse(events.find((e) => e.type === type)?.metadata.occurredAt ?? '');
    queued.push(at('RunStarted') - at('RunRequested'));
    executed.push(at('RunCompleted') - at('RunStarted'));
  }
  return { queued: latency(queued), executed: latency(executed) };
}
