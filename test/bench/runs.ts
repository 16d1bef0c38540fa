/**
 * 8. Runs: what the run engine costs per node, with the offline provider (no network, no model).
 *  a) runs/s and latency of a 2-node and a 50-node chain (transform → llm offline → transform …):
 *     in-process (requestRun claimed in the same decision + the run executor, what `POST …/run` does minus
 *     HTTP) and over HTTP (`POST /api/flows/{id}/run`, synchronous, the whole app);
 *  b) public-trigger runs/s of the 2-node flow (`POST /api/public/flows/{id}/trigger`, sync) next to
 *     a bare Koa route in the same run, with n8n's published figure for scale;
 *  c) async runs through Kafka: test/bench/runs-async.ts (`npm run bench -- runs-async`).
 * Figures only, except the trigger aim the issue states (5 × n8n's 220/s).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { CommandContext } from '../../commands/handle.js';
import { requestRun } from '../../commands/runs.js';
import type { ProcessDoc } from '../../projections/runs.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { runLoad, type LoadResult } from './load.js';
import { fmt, latency, now, settle, type Report } from './support.js';

export const BENCH = '8 runs';
const N8N_PER_SECOND = 220;
const AIM_PER_SECOND = 5 * N8N_PER_SECOND;

export interface RunBenchOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

export const defaults: RunBenchOptions = { concurrency: 16, warmupMs: 1_000, durationMs: 4_000 };

export interface BenchUser {
  userId: string;
  auth: Record<string, string>;
}

export async function benchRuns(report: Report, o: RunBenchOptions = defaults): Promise<void> {
  let service: TestService | null = null;
  let bare: Server | null = null;
  try {
    service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    const user = await registerBenchUser(service.baseUrl);
    const small = await chainFlow(service.baseUrl, user, 2);
    const big = await chainFlow(service.baseUrl, user, 50);
    report.info(BENCH, `flows: chains of transform / llm (offline) nodes, 2 and 50 nodes; ${o.concurrency} concurrent runs; ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s measured each`);

    for (const [flowId, nodes] of [[small, 2], [big, 50]] as const) {
      await benchInProcess(report, service, user, flowId, nodes, o);
      await settle();
      const http = await runLoad({ ...loadOn(service, `/flows/${flowId}/run`, o), headers: user.auth, body: JSON.stringify({ inputs: { topic: 'bench' } }) });
      record(report, `${nodes}-node flow over HTTP (POST /api/flows/{id}/run, sync)`, http, nodes);
      await settle();
    }

    const key = await enableTrigger(service.baseUrl, user, small);
    bare = await startBareKoa();
    const bareResult = await runLoad({ ...loadOn(service, '/bare', o), port: (bare.address() as { port: number }).port, paths: ['/bare'], body: JSON.stringify({ topic: 'bench' }) });
    record(report, 'bare Koa (koa-body, POST → small JSON)', bareResult);
    await settle();
    const trigger = await runLoad({ ...loadOn(service, `/public/flows/${small}/trigger`, o), headers: { 'X-Trigger-Key': key }, body: JSON.stringify({ topic: 'bench' }) });
    const rate = record(report, '2-node flow via public trigger (sync)', trigger, 2, { op: '>=', value: AIM_PER_SECOND });
    report.figure(BENCH, 'public-trigger runs as a share of bare Koa', (trigger.requests / trigger.elapsedMs / (bareResult.requests / bareResult.elapsedMs)) * 100, '%', { digits: 1 });
    report.info(BENCH, `for scale: n8n's documentation reports about ${N8N_PER_SECOND} executions per second for a webhook→set workflow on a 2-vCPU instance; aim: 5× that (${fmt(AIM_PER_SECOND)}/s); measured ${fmt(rate)}/s = ${(rate / N8N_PER_SECOND).toFixed(1)}× n8n`);
    await checkRuns(service, small, trigger.requests);
  } finally {
    if (bare) await closeServer(bare);
    await service?.stop();
  }
}

/** `POST …/run` minus HTTP: the run requested and claimed in one decision, then executed here. */
async function benchInProcess(report: Report, service: TestService, user: BenchUser, flowId: string, nodes: number, o: RunBenchOptions) {
  const { services } = service;
  const scope = { userId: user.userId, orgId: null, workspaceId: null };
  let failures = 0;
  let firstFailure: string | null = null;
  const once = async () => {
    const context: CommandContext = { actorId: user.userId, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: services.now() };
    const processId = services.newId();
    await requestRun(services.eventStore, context, processId, { flowId, mode: 'flow', inputs: { topic: 'bench' }, async: false, requestedBy: user.userId, source: 'api', scope, claimBy: services.runs.localWorkerId });
    const state = await services.runs.execute(processId, services.runs.localWorkerId);
    if (state.status !== 'completed') throw new Error(`run ended ${state.status}: ${JSON.stringify(state.failure)}`);
  };
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
        }
      }),
    );
    return now() - t0;
  };
  await phase(o.warmupMs, null);
  const samples: number[] = [];
  const elapsedMs = await phase(o.durationMs, samples);
  record(report, `${nodes}-node flow in-process (requestRun + execute)`, { requests: samples.length, failures, statuses: {}, elapsedMs, latencies: Float64Array.from(samples), firstFailure }, nodes);
}

function record(report: Report, what: string, r: LoadResult, nodes?: number, target?: { op: '>='; value: number }): number {
  const lat = latency(r.latencies);
  const rate = r.requests / (r.elapsedMs / 1000);
  const failures = r.failures ? `; ${r.failures} failed (${JSON.stringify(r.statuses)}), first: ${r.firstFailure}` : '';
  report.figure(BENCH, `${what}: throughput`, rate, nodes ? 'runs/s' : 'req/s', { target, note: `${fmt(r.requests)} in ${(r.elapsedMs / 1000).toFixed(1)} s${failures}` });
  report.figure(BENCH, `${what}: latency p50`, lat.p50, 'ms', { digits: 2 });
  report.figure(BENCH, `${what}: latency p99`, lat.p99, 'ms', { digits: 2 });
  if (nodes) report.info(BENCH, `${what}: ${fmt(rate * nodes)} nodes/s, ${(1000 / (rate * nodes)).toFixed(3)} ms of wall time per node at this concurrency`);
  return rate;
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

async function enableTrigger(baseUrl: string, user: BenchUser, flowId: string): Promise<string> {
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

async function startBareKoa(): Promise<Server> {
  const app = new Koa();
  app.use(koaBody());
  app.use((ctx) => {
    if (ctx.method !== 'POST') return;
    ctx.body = { success: true, received: ctx.request.body };
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
