/**
 * 7. Flows: the editing hot path and the cost of the event-sourced flow.
 *  - add-node over HTTP (`POST /api/flows/{id}/nodes`, the whole app from startTestService('embedded'):
 *    JWT, validation, fold + decide on the flow aggregate, SQLite append, read-your-writes wait for
 *    the flows projection, read-model fetch) next to a bare Koa route, same load generator, same run;
 *  - GET of a flow with 500 nodes (and 499 edges) from the read model;
 *  - folding a flow stream of 10,000 events with `foldFlow` (read from SQLite + fold, and fold alone).
 * Figures only; the ratio to bare Koa is shown without a target.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { BARE_KOA_LABEL, closeServer, startBareKoa } from './bare-koa.js';
import { decideFlow, evolveFlow, flowStreamId, foldFlow, initialFlowState, type FlowCommand, type FlowState } from '../../domain/flows/index.js';
import type { EventStore } from '../../ports/event-store.js';
import { call } from '../support/http.js';
import { answer, apiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { runLoad, type LoadOptions, type LoadResult } from './load.js';
import { commandContext, embeddedEventStore, fmt, latency, now, settle, tempDir, type Report } from './support.js';

const BENCH = '7 flows';

type WithoutAt = FlowCommand extends infer C ? (C extends unknown ? Omit<C, 'at'> : never) : never;

export interface FlowBenchOptions {
  /** Flows the add-node load is spread over (each holds at most 500 nodes). */
  flows: number;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  bigFlowNodes: number;
  foldEvents: number;
  foldRepeats: number;
}

export const defaults: FlowBenchOptions = { flows: 128, concurrency: 32, warmupMs: 1_000, durationMs: 5_000, bigFlowNodes: 500, foldEvents: 10_000, foldRepeats: 5 };

const nodeBody = JSON.stringify({
  type: 'custom',
  position: { x: 120, y: 80 },
  data: { agentName: 'Bench', nodeType: 'llm', llm: 'openai', model: 'gpt-4o-mini', prompt: 'Summarize {{inputs.text}}', isAsync: false, conditions: [], variables: { lang: 'en' } },
});

export async function benchFlows(report: Report, o: FlowBenchOptions = defaults): Promise<void> {
  let service: TestService | null = null;
  let bare: Server | null = null;
  try {
    service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    const auth = await registerBenchUser(service.baseUrl);
    bare = await startBareKoa({ status: 201 });
    await benchAddNode(report, service, auth, bare, o);
    await settle();
    await benchBigFlowGet(report, service, auth, o);
  } finally {
    if (bare) await closeServer(bare);
    await service?.stop();
  }
  await settle();
  await benchFold(report, o);
}

async function benchAddNode(report: Report, service: TestService, auth: Record<string, string>, bare: Server, o: FlowBenchOptions) {
  const flowIds: string[] = [];
  for (let i = 0; i < o.flows; i++) flowIds.push(await createFlow(service.baseUrl, auth, `bench ${i}`));
  const base = new URL(service.baseUrl);
  const load = (port: number, paths: string[], headers: Record<string, string> = {}): LoadOptions => ({
    host: '127.0.0.1',
    port,
    method: 'POST',
    paths,
    body: nodeBody,
    headers,
    concurrency: o.concurrency,
    warmupMs: o.warmupMs,
    durationMs: o.durationMs,
  });
  report.info(BENCH, `add-node: full app, JWT, an llm node body of ${nodeBody.length} bytes, round-robin over ${o.flows} flows (so each grows to a few dozen nodes)`);
  report.info(BENCH, `load: ${o.concurrency} keep-alive connections, ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s measured each; the load generator shares the CPU cores`);

  const bareResult = await runLoad(load((bare.address() as { port: number }).port, ['/bare']));
  record(report, BARE_KOA_LABEL, bareResult);
  await settle();
  const appResult = await runLoad(load(Number(base.port), flowIds.map((id) => `${base.pathname}/flows/${id}/nodes`), auth));
  record(report, 'POST /api/flows/{id}/nodes (full app)', appResult);
  const ratio = (appResult.requests / appResult.elapsedMs / (bareResult.requests / bareResult.elapsedMs)) * 100;
  report.figure(BENCH, 'add-node throughput as a share of bare Koa', ratio, '%', { digits: 1 });

  // The figures only count if the nodes are really there.
  let nodes = 0;
  for (const id of flowIds) nodes += (await call(service.baseUrl, 'GET', `/flows/${id}`, undefined, auth)).body.flow.nodes.length;
  if (nodes < appResult.requests) throw new Error(`the flows hold ${nodes} nodes, fewer than the ${appResult.requests} adds measured`);
  report.info(BENCH, `check: ${fmt(nodes)} nodes in the read model (warm-up included) ≥ ${fmt(appResult.requests)} measured adds`);
}

async function benchBigFlowGet(report: Report, service: TestService, auth: Record<string, string>, o: FlowBenchOptions) {
  const flowId = await createFlow(service.baseUrl, auth, 'big');
  const nodes = Array.from({ length: o.bigFlowNodes }, (_, i) => ({
    id: `n${i}`,
    type: 'custom',
    position: { x: (i % 25) * 200, y: Math.floor(i / 25) * 120 },
    data: { agentName: `Step ${i}`, nodeType: 'transform', template: `step ${i}: {{previous}}`, variables: { index: i } },
  }));
  const edges = nodes.slice(1).map((n, i) => ({ id: `e${i}`, source: `n${i}`, target: n.id }));
  const put = await call(service.baseUrl, 'PUT', `/flows/${flowId}`, { name: 'big', nodes, edges }, auth);
  if (put.status !== 200) throw new Error(`PUT big flow answered ${put.status}: ${put.text.slice(0, 300)}`);
  const got = await call(service.baseUrl, 'GET', `/flows/${flowId}`, undefined, auth);
  const base = new URL(service.baseUrl);
  report.info(BENCH, `GET big flow: ${o.bigFlowNodes} nodes, ${edges.length} edges, response ${fmt(got.text.length / 1024, 0)} KiB`);
  const result = await runLoad({
    host: '127.0.0.1',
    port: Number(base.port),
    method: 'GET',
    paths: [`${base.pathname}/flows/${flowId}`],
    headers: auth,
    concurrency: o.concurrency,
    warmupMs: o.warmupMs,
    durationMs: o.durationMs,
  });
  record(report, `GET /api/flows/{id} with ${o.bigFlowNodes} nodes`, result);
}

/** A 10,000-event flow: nodes added, then mostly drags and prompt edits, some connections and run records. */
async function benchFold(report: Report, o: FlowBenchOptions) {
  const dir = tempDir('flows-fold');
  const { store } = embeddedEventStore(dir.path);
  try {
    const flowId = randomUUID();
    const built = await seedFlowStream(store, flowId, o.foldEvents);
    report.info(BENCH, `fold: one flow stream of ${fmt(built.events)} events ending with ${built.state.nodes.length} nodes and ${built.state.edges.length} edges, in SQLite`);
    const readAndFold: number[] = [];
    const foldOnly: number[] = [];
    for (let i = 0; i < o.foldRepeats; i++) {
      const t0 = now();
      const events = await store.readStream(flowStreamId(flowId));
      const t1 = now();
      const state = foldFlow(events);
      const t2 = now();
      if (state.version !== built.events - 1) throw new Error(`fold ended at version ${state.version}, expected ${built.events - 1}`);
      readAndFold.push(t2 - t0);
      foldOnly.push(t2 - t1);
    }
    const median = (xs: number[]) => latency(xs).p50;
    report.figure(BENCH, `read + foldFlow of ${fmt(built.events)} events (median of ${o.foldRepeats})`, median(readAndFold), 'ms', { digits: 1 });
    report.figure(BENCH, `foldFlow alone of ${fmt(built.events)} events (median of ${o.foldRepeats})`, median(foldOnly), 'ms', { digits: 1 });
  } finally {
    await store.close();
    dir.cleanup();
  }
}

async function seedFlowStream(store: EventStore, flowId: string, total: number): Promise<{ events: number; state: FlowState }> {
  let state = initialFlowState;
  let count = 0;
  let clock = Date.UTC(2026, 0, 1);
  const pending: Array<{ type: string; data: unknown }> = [];
  const { now: at, ...who } = commandContext();
  const metadata = { ...who, occurredAt: at.toISOString() };
  const flush = async () => {
    if (pending.length === 0) return;
    await store.append(
      flowStreamId(flowId),
      pending.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })),
      count - pending.length - 1 < 0 ? 'no_stream' : count - pending.length - 1,
    );
    pending.length = 0;
  };
  const run = async (command: WithoutAt) => {
    const events = decideFlow({ ...command, at: new Date((clock += 1000)).toISOString() } as FlowCommand, state);
    for (const e of events) {
      state = evolveFlow(state, e);
      pending.push(e);
      count += 1;
    }
    if (pending.length >= 500) await flush();
  };
  const nodeCount = 200;
  await run({ type: 'CreateFlow', flowId, name: 'fold bench', ownerId: 'bench', orgId: null, workspaceId: null });
  for (let i = 0; i < nodeCount && count < total; i++) {
    await run({ type: 'AddNode', nodeId: `n${i}`, node: { type: 'custom', position: { x: i, y: i }, data: { nodeType: 'llm', llm: 'openai', model: 'gpt-4o', prompt: `p${i}` } } });
  }
  for (let i = 1; count < total; i++) {
    const n = `n${i % nodeCount}`;
    const kind = i % 10;
    if (kind < 6) await run({ type: 'UpdateNode', nodeId: n, patch: { position: { x: i, y: -i } } });
    else if (kind < 8) await run({ type: 'UpdateNode', nodeId: n, patch: { data: { prompt: `prompt ${i}` } } });
    else if (kind === 8) await run({ type: 'RecordNodeExecution', nodeId: n, entryId: `h${i}`, processId: `r${i}`, status: 'completed', output: `out ${i}`, executionTime: 5 });
    else {
      const edgeId = `e${i % 150}`;
      const exists = state.edges.some((e) => e.id === edgeId);
      const a = i % 150;
      if (exists) await run({ type: 'RemoveConnection', connectionId: edgeId });
      else await run({ type: 'AddConnection', connectionId: edgeId, connection: { source: `n${a}`, target: `n${a + 1 + (i % 40)}` } });
    }
  }
  await flush();
  return { events: count, state };
}

function record(report: Report, what: string, r: LoadResult): void {
  const lat = latency(r.latencies);
  const rate = r.requests / (r.elapsedMs / 1000);
  const failures = r.failures ? `; ${r.failures} failed (${JSON.stringify(r.statuses)}), first: ${r.firstFailure}` : '';
  report.figure(BENCH, `${what}: throughput`, rate, 'req/s', { note: `${fmt(r.requests)} requests in ${(r.elapsedMs / 1000).toFixed(1)} s${failures}` });
  report.figure(BENCH, `${what}: latency p50`, lat.p50, 'ms', { digits: 2 });
  report.figure(BENCH, `${what}: latency p99`, lat.p99, 'ms', { digits: 2 });
}

async function registerBenchUser(baseUrl: string): Promise<Record<string, string>> {
  // Setup, not measured: through the typed client generated from the OpenAPI document.
  const res = await answer(apiClient(baseUrl).POST('/auth/register', { body: { email: `bench-flows-${Date.now()}@example.com`, password: 'correct horse battery', name: 'Bench' } }));
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  return { Authorization: `Bearer ${res.body.token as string}` };
}

async function createFlow(baseUrl: string, auth: Record<string, string>, name: string): Promise<string> {
  const res = await answer(apiClient(baseUrl, auth).POST('/flows', { body: { name } }));
  if (res.status !== 201) throw new Error(`POST /flows answered ${res.status}: ${res.text}`);
  return res.data!.flow.id;
}

