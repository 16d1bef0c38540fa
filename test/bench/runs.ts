/**
 * 8. Runs: what the run engine costs per node, with the offline provider (no network, no model).
 *  a) a 2-node and a 50-node chain (transform → llm offline → transform …) in-process (requestRun
 *     claimed in the same decision + the run executor, what `POST …/run` does minus HTTP): runs/s at
 *     16 concurrent runs, and the 50-node run one at a time for its latency and ms per node (aim:
 *     p50 ≤ 60 ms, ≤ 1 ms per node); and over HTTP (`POST /api/flows/{id}/run`, synchronous, the whole app);
 *  b) public-trigger runs of the 2-node flow (`POST /api/public/flows/{id}/trigger`, sync) next to a
 *     bare Koa route in the same run, at 4 connections (aims: ≥ 15 % of bare Koa, p99 ≤ 20 ms) and
 *     at 16 (throughput), with n8n's published figure for scale;
 *  c) async runs through Kafka: test/bench/runs-async.ts (`npm run bench -- runs-async`).
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { BARE_KOA_LABEL, FLOOR_LABEL, closeServer, startBareKoa } from './bare-koa.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { CommandContext } from '../../commands/handle.js';
import { requestRun } from '../../commands/runs.js';
import type { ProcessDoc } from '../../projections/runs.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { runLoad, type LoadOptions, type LoadResult } from './load.js';
import { fmt, latency, now, settle, tempDir, type Report, type Target } from './support.js';

export const BENCH = '8 runs';
const N8N_PER_SECOND = 220;

export interface RunBenchOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

export const defaults: RunBenchOptions = { concurrency: 16, warmupMs: 1_000, durationMs: 4_000 };

/** The aims for this bench (issue 18). */
export const AIMS = {
  /** A 50-node linear flow in-process, one run at a time: p50 of the whole run, and per node. */
  chainP50Ms: 60,
  msPerNode: 1,
  /** The sync 2-node public trigger as a share of bare Koa, and its p99, at this many connections. */
  triggerShareOfKoa: 15,
  triggerP99Ms: 20,
  triggerConcurrency: 4,
};

export interface BenchUser {
  userId: string;
  auth: Record<string, string>;
}

export async function benchRuns(report: Report, o: RunBenchOptions = defaults): Promise<void> {
  let service: TestService | null = null;
  let bare: Server | null = null;
  try {
    service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ...(process.env.DURABILITY ? { DURABILITY: process.env.DURABILITY } : {}) });
    const user = await registerBenchUser(service.baseUrl);
    const small = await chainFlow(service.baseUrl, user, 2);
    const big = await chainFlow(service.baseUrl, user, 50);
    report.info(BENCH, `flows: chains of transform / llm (offline) nodes, 2 and 50 nodes; ${o.concurrency} concurrent runs; ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s measured each`);

    for (const [flowId, nodes] of [[small, 2], [big, 50]] as const) {
      await benchInProcess(report, service, user, flowId, nodes, o);
      await drain(service);
      const http = await runLoad({ ...loadOn(service, `/flows/${flowId}/run`, o), headers: user.auth, body: JSON.stringify({ inputs: { topic: 'bench' } }) });
      record(report, `${nodes}-node flow over HTTP (POST /api/flows/{id}/run, sync)`, http, nodes);
      await drain(service);
    }
    // The per-node aim: one run at a time, so the figure is a run's own latency, not a share of a busy machine.
    const sequential = await benchInProcess(report, service, user, big, 50, { ...o, concurrency: 1 });
    report.figure(BENCH, '50-node flow in-process, one at a time: latency p50', sequential.p50, 'ms', { digits: 1, target: { op: '<=', value: AIMS.chainP50Ms } });
    report.figure(BENCH, '50-node flow in-process, one at a time: ms per node (p50 / 50)', sequential.p50 / 50, 'ms', { digits: 2, target: { op: '<=', value: AIMS.msPerNode } });
    await drain(service);

    const key = await enableTrigger(service.baseUrl, user, small);
    bare = await startBareKoa();
    const barePort = (bare.address() as { port: number }).port;
    let triggered = 0;
    for (const concurrency of [AIMS.triggerConcurrency, o.concurrency]) {
      const c = { ...o, concurrency };
      const bareResult = await runLoad({ ...loadOn(service, '/bare', c), port: barePort, paths: ['/bare'], body: JSON.stringify({ topic: 'bench' }) });
      record(report, `${BARE_KOA_LABEL}, c=${concurrency}`, bareResult);
      if (concurrency === AIMS.triggerConcurrency) await benchFloor(report, c, bareResult);
      await drain(service);
      const trigger = await runLoad({ ...loadOn(service, `/public/flows/${small}/trigger`, c), headers: { 'X-Trigger-Key': key }, body: JSON.stringify({ topic: 'bench' }) });
      triggered += trigger.requests;
      const aim = concurrency === AIMS.triggerConcurrency;
      const rate = record(report, `2-node flow via public trigger (sync), c=${concurrency}`, trigger, 2, undefined, aim ? { op: '<=', value: AIMS.triggerP99Ms } : undefined);
      const share = (trigger.requests / trigger.elapsedMs / (bareResult.requests / bareResult.elapsedMs)) * 100;
      report.figure(BENCH, `public-trigger runs as a share of bare Koa, c=${concurrency}`, share, '%', { digits: 1, ...(aim && { target: { op: '>=', value: AIMS.triggerShareOfKoa } }) });
      if (!aim) report.info(BENCH, `for scale: n8n's documentation reports about ${N8N_PER_SECOND} executions per second for a webhook→set workflow on a 2-vCPU instance; measured ${fmt(rate)}/s = ${(rate / N8N_PER_SECOND).toFixed(1)}× n8n`);
      await drain(service);
    }
    await checkRuns(service, small, triggered);
  } finally {
    if (bare) await closeServer(bare);
    await service?.stop();
  }
}

/**
 * The ceiling of the trigger aim: bare Koa plus one durable append per request, on a fresh SQLite
 * log with the service's default durability, as a share of the bare Koa just measured.
 */
async function benchFloor(report: Report, c: RunBenchOptions, bareResult: LoadResult): Promise<void> {
  const dir = tempDir('floor');
  const store = new SqliteEventStore(`${dir.path}/events.db`, { durability: 'fsync' });
  const server = await startBareKoa({ append: store });
  try {
    const port = (server.address() as { port: number }).port;
    const floor = await runLoad({ host: '127.0.0.1', port, method: 'POST', paths: ['/floor'], body: JSON.stringify({ topic: 'bench' }), concurrency: c.concurrency, warmupMs: c.warmupMs, durationMs: c.durationMs });
    record(report, `${FLOOR_LABEL}, c=${c.concurrency}`, floor);
    const share = (floor.requests / floor.elapsedMs / (bareResult.requests / bareResult.elapsedMs)) * 100;
    report.figure(BENCH, `floor as a share of bare Koa, c=${c.concurrency}`, share, '%', { digits: 1, note: 'the most any run that is recorded durably before its answer can reach here' });
  } finally {
    await closeServer(server);
    await store.close();
    dir.cleanup();
  }
}

/**
 * `POST …/run` minus HTTP: the run requested and claimed in one decision, then executed here. The
 * projector runs in this process too, behind the runs: a phase ends once the read model shows every
 * run it started completed, so work deferred to the projector is counted rather than left behind.
 * One at a time (c=1) the read model catches up between runs, outside the run's latency.
 */
async function benchInProcess(report: Report, service: TestService, user: BenchUser, flowId: string, nodes: number, o: RunBenchOptions) {
  const { services } = service;
  const scope = { userId: user.userId, orgId: null, workspaceId: null };
  let failures = 0;
  let firstFailure: string | null = null;
  let completed = 0;
  const processes = services.readStore.collection<ProcessDoc>('processes');
  const projectedBase = await processes.count({ flowId, status: 'completed' });
  const catchUp = async () => {
    const since = now();
    while ((await processes.count({ flowId, status: 'completed' })) < projectedBase + completed) {
      if (now() - since > 60_000) throw new Error('the read model did not catch up with the runs within 60 s');
      await new Promise((r) => setTimeout(r, 2));
    }
    return now() - since;
  };
  const once = async () => {
    const context: CommandContext = { actorId: user.userId, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: services.now() };
    const processId = services.newId();
    await requestRun(services.eventStore, context, processId, { flowId, mode: 'flow', inputs: { topic: 'bench' }, async: false, requestedBy: user.userId, source: 'api', scope, claimBy: services.runs.localWorkerId });
    const state = await services.runs.execute(processId, services.runs.localWorkerId);
    if (state.status !== 'completed') throw new Error(`run ended ${state.status}: ${JSON.stringify(state.failure)}`);
    completed++;
  };
  let lagMs = 0;
  const phase = async (ms: number, samples: number[] | null) => {
    const deadline = now() + ms;
    const t0 = now();
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (now() < deadline) {
          const start = now();
          try {
            await once();
            samples?.push(now() - start);
          } catch (err) {
            if (!samples) continue;
            failures++;
            firstFailure ??= (err as Error).message;
          }
          if (o.concurrency === 1) lagMs += await catchUp();
        }
      }),
    );
    if (o.concurrency > 1) lagMs += await catchUp();
    return now() - t0 - (o.concurrency === 1 ? lagMs : 0);
  };
  await phase(o.warmupMs, null);
  failures = 0;
  const samples: number[] = [];
  lagMs = 0;
  const elapsedMs = await phase(o.durationMs, samples);
  const result = { requests: samples.length, failures, statuses: {}, elapsedMs, latencies: Float64Array.from(samples), firstFailure };
  const what = `${nodes}-node flow in-process (requestRun + execute), c=${o.concurrency}`;
  record(report, what, result, nodes);
  report.info(BENCH, `${what}: the read model caught up ${fmt(lagMs)} ms after the runs${o.concurrency === 1 ? ' (between runs, not counted)' : ' (counted in the throughput)'}`);
  return latency(result.latencies);
}

function record(report: Report, what: string, r: LoadResult, nodes?: number, target?: Target, p99Target?: Target): number {
  const lat = latency(r.latencies);
  const rate = r.requests / (r.elapsedMs / 1000);
  const failures = r.failures ? `; ${r.failures} failed (${JSON.stringify(r.statuses)}), first: ${r.firstFailure}` : '';
  report.figure(BENCH, `${what}: throughput`, rate, nodes ? 'runs/s' : 'req/s', { target, note: `${fmt(r.requests)} in ${(r.elapsedMs / 1000).toFixed(1)} s${failures}` });
  report.figure(BENCH, `${what}: latency p50`, lat.p50, 'ms', { digits: 2 });
  report.figure(BENCH, `${what}: latency p99`, lat.p99, 'ms', { digits: 2, target: p99Target });
  if (nodes) report.info(BENCH, `${what}: ${fmt(rate * nodes)} nodes/s, ${(1000 / (rate * nodes)).toFixed(3)} ms of wall time per node at this concurrency`);
  return rate;
}

/** Between phases: the projectors behind the last one reach the log's head, so its backlog is not the next one's cost. */
async function drain(service: TestService) {
  const { services } = service;
  await services.projections.waitFor(await services.eventStore.headPosition(), 'run-drain', 60_000);
  await settle();
}

const loadOn = (service: TestService, path: string, o: RunBenchOptions) => {
  const base = new URL(service.baseUrl);
  return { host: '127.0.0.1', port: Number(base.port), method: 'POST' as const, paths: [`${base.pathname}${path}`], concurrency: o.concurrency, warmupMs: o.warmupMs, durationMs: o.durationMs };
};

export async function registerBenchUser(baseUrl: string): Promise<BenchUser> {
  const res = await call(baseUrl, 'POST', '/auth/register', { email: `bench-runs-${randomUUID()}@example.com`, password: 'correct horse battery', name: 'Bench' });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  return { userId: res.body.user.id as string, auth: { Authorization: `Bearer ${res.body.token as string}` } };
}

/** A chain of `n` nodes, alternating transform and offline llm; each renders a short text from its predecessor. */
export async function chainFlow(baseUrl: string, user: BenchUser, n: number): Promise<string> {
  const created = await call(baseUrl, 'POST', '/flows', { name: `chain ${n}` }, user.auth);
  if (created.status !== 201) throw new Error(`POST /flows answered ${created.status}: ${created.text}`);
  const flowId = created.body.flow.id as string;
  const nodes = Array.from({ length: n }, (_, i) => ({
    id: `n${i}`,
    type: 'custom',
    position: { x: i * 200, y: 0 },
    data: i % 2 === 0 ? { nodeType: 'transform', template: `step ${i} on {{inputs.topic}}` } : { nodeType: 'llm', llm: 'offline', model: 'any', prompt: `summarize: {{previous}}` },
  }));
  const edges = nodes.slice(1).map((node, i) => ({ id: `e${i}`, source: `n${i}`, target: node.id }));
  const put = await call(baseUrl, 'PUT', `/flows/${flowId}`, { name: `chain ${n}`, nodes, edges }, user.auth);
  if (put.status !== 200) throw new Error(`PUT flow answered ${put.status}: ${put.text.slice(0, 300)}`);
  const probe = await call(baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'probe' } }, user.auth);
  if (probe.status !== 200 || probe.body.status !== 'completed') throw new Error(`probe run: ${probe.status} ${probe.text.slice(0, 300)}`);
  return flowId;
}

export async function enableTrigger(baseUrl: string, user: BenchUser, flowId: string): Promise<string> {
  const settings = await call(baseUrl, 'PUT', `/flows/${flowId}/trigger`, { enabled: true }, user.auth);
  if (settings.status !== 200) throw new Error(`PUT trigger answered ${settings.status}: ${settings.text}`);
  const key = await call(baseUrl, 'POST', `/flows/${flowId}/trigger/regenerate-key`, undefined, user.auth);
  if (key.status !== 200) throw new Error(`regenerate-key answered ${key.status}: ${key.text}`);
  return key.body.key as string;
}

/** Measured figures only count if the runs really happened: the read model must hold at least that many completed runs. */
async function checkRuns(service: TestService, flowId: string, measured: number) {
  const completed = await service.services.readStore.collection<ProcessDoc>('processes').find({ flowId, status: 'completed', requestedBy: null }); // trigger runs have no user
  if (completed.length < measured) throw new Error(`the read model holds ${completed.length} completed runs of the flow, fewer than the ${measured} measured`);
}

/** Load options for sync runs of a fresh 2-node flow through its public trigger (a new user, the flow, its key). */
export async function triggerLoad(service: TestService, timing: { concurrency: number; warmupMs: number; durationMs: number }): Promise<LoadOptions> {
  const user = await registerBenchUser(service.baseUrl);
  const flowId = await chainFlow(service.baseUrl, user, 2);
  const key = await enableTrigger(service.baseUrl, user, flowId);
  const base = new URL(service.baseUrl);
  return {
    host: '127.0.0.1', port: Number(base.port), method: 'POST', paths: [`${base.pathname}/public/flows/${flowId}/trigger`],
    headers: { 'X-Trigger-Key': key }, body: JSON.stringify({ topic: 'bench' }), ...timing,
  };
}
