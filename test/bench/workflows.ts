/**
 * Workflows (issue 13), embedded configuration, the whole service in this process; the HTTP load
 * of a) and b) runs in a worker thread (scenario-load.ts), on the other core:
 *  a) start → completed of a 3-node workflow (transform → wait_signal → transform) whose signal is
 *     sent right after the 201: POST /workflows, POST …/signal, then GET …/history?wait=true until
 *     WorkflowCompleted; workflows/s and p50/p99 at a fixed concurrency. Same-run reference: the
 *     plain 3-transform flow run synchronously through POST /flows/{id}/run at the same concurrency;
 *  b) signals/s into one workflow (one stream, every signal folds it) and across M workflows
 *     (round robin), and the latency from sending a signal to seeing its effect in a query
 *     (wait_signal → set_state, then POST …/query {name: "stage"} answers "approved");
 *  c) timers: workflows each sleeping 2 s (created in-process, as the API's handler does, so the
 *     creation rate is not the HTTP client's): fire lateness p50/p99 from each TimerFired, first
 *     paced (2,000 created at 500/s: timers come due at a rate the service sustains), then a burst
 *     of N created as fast as possible (lateness includes the backlog; fires/s sustained printed),
 *     with the process's heap (after a forced GC) before, right after creating them, and after they all fired.
 * The issue asks for 10,000 sleeping workflows and signals across 1,000; the counts used are printed.
 */
import { randomUUID } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import type { CommandContext } from '../../commands/handle.js';
import { createWorkflow, loadWorkflow } from '../../commands/workflows.js';
import type { WorkflowDoc } from '../../projections/workflows.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { fmt, latency, now, settle, type Report } from './support.js';
import { runScenario, type ScenarioResult } from './scenario-load.js';

const BENCH = 'workflows';

export interface WorkflowBenchOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Signals/s phases run this long each. */
  signalMs: number;
  /** Workflows the "across many" signals are spread over. */
  signalWorkflows: number;
  /** Signal → query samples (one at a time). */
  querySamples: number;
  /** Workflows sleeping at once in the timers figure. */
  sleepers: number;
  sleepMs: number;
  /** Workflows created at a steady rate before the burst, for lateness at a sustainable load. */
  pacedSleepers: number;
  pacedPerSecond: number;
  timeoutMs: number;
}

/** Sized to keep the whole bench within about 90 s on a shared 2-vCPU machine. */
export const defaults: WorkflowBenchOptions = {
  concurrency: 16,
  warmupMs: 1_000,
  durationMs: 5_000,
  signalMs: 3_000,
  signalWorkflows: 1_000,
  querySamples: 300,
  sleepers: 10_000,
  sleepMs: 2_000,
  pacedSleepers: 2_000,
  pacedPerSecond: 500,
  timeoutMs: 60_000,
};

interface BenchUser {
  userId: string;
  auth: Record<string, string>;
}

type Api = (method: string, path: string, body?: unknown) => ReturnType<typeof call>;

/** A forced GC (the bench does not run with --expose-gc), so heap figures are live objects, not garbage. */
function forceGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
const gc = forceGc();
const heapMb = () => {
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

export async function benchWorkflows(report: Report, o: WorkflowBenchOptions = defaults): Promise<void> {
  let service: TestService | null = null;
  try {
    service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    const user = await registerBenchUser(service.baseUrl);
    const api: Api = (method, path, body) => call(service!.baseUrl, method, path, body, user.auth);
    report.info(BENCH, `embedded (SQLite log, in-memory read model), service and load generator in one process; concurrency ${o.concurrency}`);

    await benchCompletion(report, service, user, api, o);
    await settle();
    await benchSignals(report, service, user, api, o);
    await settle();
    await benchTimers(report, service, user, api, o);
  } finally {
    await service?.stop();
  }
}

// ---------------------------------------------------------------- a) start → completed

async function benchCompletion(report: Report, service: TestService, user: BenchUser, api: Api, o: WorkflowBenchOptions) {
  const plain = await flowOf(api, 'plain 3 transforms', [
    { nodeType: 'transform', template: 'order {{inputs.order}}' },
    { nodeType: 'transform', template: 'checked {{previous}}' },
    { nodeType: 'transform', template: 'done {{previous}}' },
  ]);
  const durable = await flowOf(api, 'transform → wait_signal → transform', [
    { nodeType: 'transform', template: 'order {{inputs.order}}' },
    { nodeType: 'wait_signal', signalName: 'approve' },
    { nodeType: 'transform', template: 'approved {{inputs.order}}' },
  ]);

  // The client runs in a worker thread: its requests and JSON do not share the service's event loop.
  const loadOf = (scenario: 'plainRun' | 'workflowToCompletion', flowId: string) =>
    runScenario({ scenario, baseUrl: service.baseUrl, headers: user.auth, params: { flowId }, concurrency: o.concurrency, warmupMs: o.warmupMs, durationMs: o.durationMs });
  const plainResult = await loadOf('plainRun', plain);
  record(report, 'reference: plain 3-node flow run (POST /flows/{id}/run, sync)', plainResult, 'runs/s');
  await settle();
  const wf = await loadOf('workflowToCompletion', durable);
  const rate = record(report, 'workflow start → completed (3 nodes, one wait_signal answered at once)', wf, 'workflows/s', { op: '>=', value: 500 });
  const reference = plainResult.count / (plainResult.elapsedMs / 1000);
  report.info(BENCH, `each workflow is 3 HTTP calls or more (create, signal, history long-poll until completed); the plain run is 1; workflows/s = ${(rate / reference * 100).toFixed(0)} % of plain runs/s`);
}

// ---------------------------------------------------------------- b) signals

async function benchSignals(report: Report, service: TestService, user: BenchUser, api: Api, o: WorkflowBenchOptions) {
  // Waits for a signal nobody sends: every 'ping' is recorded and stays pending.
  const parked = await flowOf(api, 'parked', [{ nodeType: 'wait_signal', signalName: 'never' }]);
  const one = await api('POST', '/workflows', { flowId: parked });
  if (one.status !== 201) throw new Error(`POST /workflows answered ${one.status}: ${one.text.slice(0, 300)}`);
  const oneId = one.body.workflow.id as string;
  const signals = (ids: string[]) =>
    runScenario({ scenario: 'signalRoundRobin', baseUrl: service.baseUrl, headers: user.auth, params: { ids: ids.join(',') }, concurrency: o.concurrency, warmupMs: 500, durationMs: o.signalMs });
  const intoOne = await signals([oneId]);
  record(report, 'signals into one workflow (POST …/signal, 202 = recorded)', intoOne, 'signals/s');
  const wf = (await api('GET', `/workflows/${oneId}`)).body.workflow;
  report.info(BENCH, `the one workflow holds ${fmt(wf.pendingSignals.length)} pending signals, history ${fmt(wf.historyLength)} events (every signal folds the whole stream)`);
  await settle();

  const ids = await createInProcess(service, user, parked, o.signalWorkflows, o.concurrency);
  const across = await signals(ids);
  record(report, `signals across ${fmt(ids.length)} workflows (round robin)`, across, 'signals/s');
  await settle();

  // Signal → observed: the signal completes wait_signal and set_state in the same decision; the query reads the log.
  const approval = await flowOf(api, 'approval', [
    { nodeType: 'wait_signal', signalName: 'go' },
    { nodeType: 'set_state', values: { stage: 'approved' } },
    { nodeType: 'wait_signal', signalName: 'never' },
  ]);
  const waiting = await createInProcess(service, user, approval, o.querySamples, o.concurrency);
  const samples: number[] = [];
  for (const id of waiting) {
    const t0 = now();
    const sig = await api('POST', `/workflows/${id}/signal`, { name: 'go' });
    const q = await api('POST', `/workflows/${id}/query`, { name: 'stage' });
    samples.push(now() - t0);
    if (sig.status !== 202 || q.status !== 200 || q.body.result !== 'approved') throw new Error(`signal ${sig.status}, query ${q.status} ${q.text.slice(0, 200)}: the signal was not observed`);
  }
  const lat = latency(samples);
  report.figure(BENCH, 'signal → observed in a query (202 of the signal + the query answer): p50', lat.p50, 'ms', { digits: 2, note: `${samples.length} samples, one at a time` });
  report.figure(BENCH, 'signal → observed in a query: p99', lat.p99, 'ms', { digits: 2, target: { op: '<=', value: 20 } });
}

// ---------------------------------------------------------------- c) timers

async function benchTimers(report: Report, service: TestService, user: BenchUser, api: Api, o: WorkflowBenchOptions) {
  const flowId = await flowOf(api, 'sleeper', [{ nodeType: 'sleep', durationMs: o.sleepMs }]);
  // Paced: timers come due at a rate the service sustains, so lateness is the timers' own.
  const paced = await createInProcess(service, user, flowId, o.pacedSleepers, o.concurrency, o.pacedPerSecond);
  await waitCompleted(service, flowId, paced.length, o.timeoutMs);
  const pacedLate = latency(await latenessOf(service, paced));
  const pacedNote = `${fmt(paced.length)} workflows created at ${fmt(o.pacedPerSecond)}/s, so ${fmt(o.pacedPerSecond)} timers/s come due`;
  report.figure(BENCH, `timers, paced: fire lateness p50`, pacedLate.p50, 'ms', { note: pacedNote });
  report.figure(BENCH, `timers, paced: fire lateness p99`, pacedLate.p99, 'ms', { target: { op: '<=', value: 50 }, note: `max ${fmt(pacedLate.max)} ms` });
  await settle();

  // Burst: N created as fast as the service takes them, all due within the same few seconds.
  const before = heapMb();
  const t0 = now();
  const ids = await createInProcess(service, user, flowId, o.sleepers, o.concurrency);
  const createdMs = now() - t0;
  const held = service.services.workflowTimers.held;
  const asleep = heapMb();
  await waitCompleted(service, flowId, paced.length + ids.length, o.timeoutMs);
  const doneMs = now() - t0;
  const lateness = await latenessOf(service, ids);
  const after = heapMb();
  const lat = latency(lateness);
  const createRate = ids.length / (createdMs / 1000);
  // The last timer came due at createdMs + sleepMs; the rest of the time is the backlog of fires.
  const fireRate = ids.length / ((doneMs - o.sleepMs) / 1000);
  const note = `${fmt(ids.length)} workflows (the issue: 10,000) created in ${(createdMs / 1000).toFixed(1)} s (${fmt(createRate)}/s, in-process); all fired and completed ${(doneMs / 1000).toFixed(1)} s after the first was created`;
  report.figure(BENCH, `timers, burst of ${fmt(ids.length)} sleeping ${o.sleepMs / 1000} s: fire lateness p50`, lat.p50, 'ms', { note });
  report.figure(BENCH, `timers, burst: fire lateness p99`, lat.p99, 'ms', { target: { op: '<=', value: 50 }, note: `max ${fmt(lat.max)} ms` });
  report.figure(BENCH, `timers, burst: fires/s sustained (FireTimer → TimerFired + node completed + workflow completed)`, fireRate, 'timers/s', { note: 'when timers come due faster than this, lateness is the backlog' });
  report.figure(BENCH, 'timers, burst: heap before creating them', before, 'MB', { digits: 1 });
  report.figure(BENCH, `timers, burst: heap right after creating ${fmt(ids.length)} (${fmt(held)} timers held in memory then)`, asleep, 'MB', { digits: 1, target: { op: '<=', value: 200 } });
  report.figure(BENCH, 'timers, burst: heap after all fired', after, 'MB', { digits: 1 });
  report.info(BENCH, `timers held in memory now: ${service.services.workflowTimers.held} (only timers due within the horizon are held); heap figures after a forced GC, whole service (read model in memory) included`);
}

/** Fire lateness of each workflow's one timer, from its stream (firedAt − fireAt, as TimerFired's lateMs). */
async function latenessOf(service: TestService, ids: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const id of ids) {
    const { state } = await loadWorkflow(service.services.eventStore, id);
    const timer = Object.values(state.timers)[0];
    if (state.status !== 'COMPLETED' || timer?.status !== 'fired') throw new Error(`workflow ${id} is ${state.status} with its timer ${timer?.status}`);
    out.push(Date.parse(timer.firedAt!) - Date.parse(timer.fireAt));
  }
  return out;
}

async function waitCompleted(service: TestService, flowId: string, expected: number, timeoutMs: number) {
  const docs = service.services.readStore.collection<WorkflowDoc>('workflows');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const done = await docs.count({ flowId, status: 'COMPLETED' });
    if (done >= expected) return;
    if (Date.now() > deadline) throw new Error(`only ${done} of ${expected} sleeping workflows completed within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---------------------------------------------------------------- helpers

function record(report: Report, what: string, r: ScenarioResult, unit: string, target?: { op: '>='; value: number }): number {
  const rate = r.count / (r.elapsedMs / 1000);
  const failures = r.failures ? `; ${r.failures} failed, first: ${r.firstFailure}` : '';
  const lat = latency(r.latencies);
  report.figure(BENCH, `${what}: throughput`, rate, unit, { target, note: `${fmt(r.count)} in ${(r.elapsedMs / 1000).toFixed(1)} s${failures}` });
  report.figure(BENCH, `${what}: latency p50`, lat.p50, 'ms', { digits: 2 });
  report.figure(BENCH, `${what}: latency p99`, lat.p99, 'ms', { digits: 2 });
  return rate;
}

/** `count` workflows of the flow, created the way POST /workflows does (minus HTTP), `concurrency` at a time (at most `perSecond` when given). */
async function createInProcess(service: TestService, user: BenchUser, flowId: string, count: number, concurrency: number, perSecond?: number): Promise<string[]> {
  const { services } = service;
  const ids: string[] = [];
  let next = 0;
  const t0 = now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const wait = perSecond ? t0 + (i * 1000) / perSecond - now() : 0;
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const workflowId = `wf_${services.newId()}`;
        const context: CommandContext = { actorId: user.userId, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: services.now() };
        await createWorkflow(services.eventStore, context, {
          workflowId, flowId, input: null, start: true, idempotencyPolicy: 'allow_duplicate', searchAttributes: {}, memo: {}, createdBy: user.userId,
          scope: { userId: user.userId, orgId: null, workspaceId: null },
        });
        ids.push(workflowId);
      }
    }),
  );
  return ids;
}

async function flowOf(api: Api, name: string, datas: Array<Record<string, unknown>>): Promise<string> {
  const created = await api('POST', '/flows', { name: `bench ${name}` });
  if (created.status !== 201) throw new Error(`POST /flows answered ${created.status}: ${created.text}`);
  const flowId = created.body.flow.id as string;
  const nodes = datas.map((data, i) => ({ id: `n${i}`, type: 'custom', position: { x: i * 200, y: 0 }, data }));
  const edges = nodes.slice(1).map((node, i) => ({ id: `e${i}`, source: `n${i}`, target: node.id }));
  const put = await api('PUT', `/flows/${flowId}`, { name: `bench ${name}`, nodes, edges });
  if (put.status !== 200) throw new Error(`PUT flow answered ${put.status}: ${put.text.slice(0, 300)}`);
  return flowId;
}

async function registerBenchUser(baseUrl: string): Promise<BenchUser> {
  const res = await call(baseUrl, 'POST', '/auth/register', { email: `bench-workflows-${randomUUID()}@example.com`, password: 'correct horse battery', name: 'Bench' });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  return { userId: res.body.user.id as string, auth: { Authorization: `Bearer ${res.body.token as string}` } };
}
