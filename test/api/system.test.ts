import { expect } from 'chai';
import { startRunRecovery, type RunRecovery } from '../../consumers/runs-recovery.js';
import { TestClock } from '../support/clock.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';

/**
 * Issue 13, system part: GET /system/overview, /system/task-queues, /system/workers,
 * /metrics/performance, /hybrid/stats and the Prometheus text at /metrics, over real HTTP on
 * both modes. The numbers must move: a run changes the counts, the percentiles and the queue
 * rates; a worker is RUNNING, then LOST when its beats stop (the TestClock moves, nobody sleeps).
 */

const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });
const METRICS_TOKEN = 'scrape-token-0123456789abcdef';
const SHUTDOWN_TIMEOUT_MS = 10_000;
/** The presence the test starts beats this rarely, so no beat happens while the test runs. */
const BEAT_MS = 60_000;

/** A small parser of the Prometheus text format (0.0.4): families with their TYPE, and samples (values as Go's ParseFloat reads them: NaN and Inf in any case). */
function parsePrometheus(text: string) {
  const types = new Map<string, string>();
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|[nN][aA][nN]|[+-]?[iI][nN][fF])(?: -?\d+)?$/.exec(line);
    if (!m) throw new Error(`line ${i + 1} is not Prometheus text: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    const family = m[1]!.replace(/_(bucket|sum|count)$/, '');
    if (!types.has(m[1]!) && !types.has(family)) throw new Error(`sample ${m[1]} has no # TYPE line`);
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { types, samples };
}

for (const mode of availableModes()) {
  describe(`system, metrics and hybrid stats (${mode})`, function () {
    this.timeout(90_000);
    const clock = new TestClock();
    let svc: TestService;
    let operator: RegisteredUser;
    let member: RegisteredUser;
    let recovery: RunRecovery | undefined;
    const client = flowClient(() => svc);
    const operatorEmail = `ops-${Date.now()}@example.test`;

    before(async () => {
      svc = await startTestService(mode, { ADMIN_EMAILS: operatorEmail, METRICS_TOKEN, SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) }, { clock });
      operator = await registerUser(svc.baseUrl, { email: operatorEmail });
      member = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await recovery?.stop();
      await svc?.stop();
    });

    const get = (user: RegisteredUser | null, path: string) => call(svc.baseUrl, 'GET', path, undefined, user ? user.auth : {});

    it('401 without credentials, 403 OPERATOR_ONLY on service-wide figures for non-operators', async () => {
      for (const path of ['/system/overview', '/system/task-queues', '/system/workers', '/metrics/performance', '/hybrid/stats', '/metrics']) {
        expectError(await get(null, path), 401);
      }
      for (const path of ['/system/task-queues', '/system/workers', '/metrics/performance', '/metrics']) {
        expectError(await get(member, path), 403, 'OPERATOR_ONLY');
      }
      expectError(await call(svc.baseUrl, 'GET', '/metrics', undefined, { Authorization: 'Bearer not-the-token' }), 401);
      const overview = await get(member, '/system/overview');
      expect(overview.status, overview.text).to.equal(200);
      expect(overview.body.service, 'service-wide figures are the operators').to.equal(null);
      expectError(await get(member, '/hybrid/stats?window=2y'), 400, 'VALIDATION_FAILED', 'query.window');
    });

    it("overview and hybrid stats count the caller's runs, and only theirs; the performance percentiles move", async () => {
      const before = (await get(member, '/system/overview')).body;
      expect(before.runs.byStatus).to.deep.equal({ queued: 0, running: 0, completed: 0, failed: 0, stopped: 0, timed_out: 0 });
      expect(before.workflows.byStatus).to.include({ CREATED: 0, RUNNING: 0, COMPLETED: 0 });
      expect(Object.keys(before.workflows.byStatus)).to.have.length(8);

      const flowId = await client.newFlow(member);
      await client.addNode(member, flowId, node({ nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'hello {{inputs.x}}' }));
      for (let i = 0; i < 3; i += 1) {
        const run = await client.as(member, 'POST', `/flows/${flowId}/run`, { inputs: { x: i } });
        expect(run.status, run.text).to.equal(200);
      }
      const after = await waitUntil('runs counted', async () => {
        const o = (await get(member, '/system/overview')).body;
        return o.runs.byStatus.completed === 3 ? o : null;
      });
      expect(after.runs.total).to.equal(3);
      expect(after.scope).to.deep.equal({ orgId: null, workspaceId: before.scope.workspaceId });
      // Another tenant sees none of them.
      expect((await get(operator, '/system/overview')).body.runs.total).to.equal(0);

      const hybrid = await get(member, '/hybrid/stats?window=1h');
      expect(hybrid.status, hybrid.text).to.equal(200);
      expect(hybrid.body.runs).to.include({ started: 3, completed: 3, failed: 0, canceled: 0, open: 0 });
      expect(hybrid.body.runs.durationMs.samples).to.equal(3);
      expect(hybrid.body.runs.durationMs.p50).to.be.a('number').and.at.least(0);
      expect(hybrid.body.runs.durationMs.p95).to.be.at.least(hybrid.body.runs.durationMs.p50);
      expect(hybrid.body.workflows).to.include({ started: 0, completed: 0 });
      expect(hybrid.body.workflows.durationMs).to.deep.equal({ p50: null, p95: null, samples: 0, sampled: false });
      expect(hybrid.body.total).to.include({ started: 3, completed: 3 });
      expect((await get(operator, '/hybrid/stats')).body.runs.started).to.equal(0);

      const perf = await get(operator, '/metrics/performance');
      expect(perf.status, perf.text).to.equal(200);
      expect(perf.body.windows).to.deep.equal(['1m', '5m', '15m']);
      expect(perf.body.process).to.include({ role: 'all', pid: process.pid });
      const runRoute = perf.body.http.find((s: { name: string }) => s.name === 'POST /flows/{flowId}/run');
      expect(runRoute, JSON.stringify(perf.body.http.map((s: { name: string }) => s.name))).to.not.equal(undefined);
      expect(runRoute.windows['1m']).to.include({ count: 3, errors: 0, errorRate: 0 });
      expect(runRoute.windows['1m'].p50Ms).to.be.a('number').and.greaterThan(0);
      expect(runRoute.windows['1m'].p99Ms).to.be.at.least(runRoute.windows['1m'].p50Ms);
      expect(runRoute.windows['1m'].throughputPerSecond).to.be.greaterThan(0);
      const llmNodes = perf.body.nodes.find((s: { name: string }) => s.name === 'llm');
      expect(llmNodes.windows['15m']).to.include({ count: 3, errors: 0 });
      const offline = perf.body.providers.find((s: { name: string }) => s.name === 'offline');
      expect(offline.windows['5m'].count).to.equal(3);
      // Unauthenticated and refused requests are timed too, under their route, as client errors (not errors).
      const overviewRoute = perf.body.http.find((s: { name: string }) => s.name === 'GET /system/overview');
      expect(overviewRoute.windows['15m'].count).to.be.at.least(4);
      expect(overviewRoute.windows['15m'].errors).to.equal(0);

      // Six minutes later the 1- and 5-minute windows no longer hold those calls; the 15-minute one does.
      clock.advance(6 * 60_000);
      const later = await get(operator, '/metrics/performance');
      const runLater = later.body.http.find((s: { name: string }) => s.name === 'POST /flows/{flowId}/run');
      expect(runLater.windows['1m'].count).to.equal(0);
      expect(runLater.windows['1m'].p50Ms).to.equal(null);
      expect(runLater.windows['5m'].count).to.equal(0);
      expect(runLater.windows['15m'].count).to.equal(3);
    });

    it('task queues: five queues with their definitions; runs requested and claimed in the last minute are counted', async () => {
      const flowId = await client.newFlow(member);
      await client.addNode(member, flowId, node({ nodeType: 'transform', template: 'q' }));
      const queued = await client.as(member, 'POST', `/flows/${flowId}/run`, { inputs: {}, async: true });
      expect(queued.status, queued.text).to.equal(202);
      await waitUntil('async run completed', async () => (await client.as(member, 'GET', `/processes/${queued.body.processId}`)).body.process?.status === 'completed');
      // The queues read the runs' read model, which may trail the run's own stream (what GET /processes folds).
      const res = await waitUntil('run claimed in the read model', async () => {
        const answer = await get(operator, '/system/task-queues');
        const queue = answer.body.queues?.find((q: { name: string }) => q.name === 'runs');
        return answer.status !== 200 || queue?.dispatchedLastMinute === 1 ? answer : null;
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.windowSeconds).to.equal(60);
      expect(res.body.queues.map((q: { name: string }) => q.name)).to.deep.equal(['runs', 'workflows', 'timers', 'webhooks', 'mcp']);
      for (const q of res.body.queues) expect(q.definition).to.have.keys('backlog', 'added', 'dispatched');
      const runs = res.body.queues.find((q: { name: string }) => q.name === 'runs');
      expect(runs).to.include({ backlog: 0, backlogAgeMs: null, oldestSince: null, addedLastMinute: 1, dispatchedLastMinute: 1 });
      expect(runs.addRatePerSecond).to.be.closeTo(1 / 60, 0.001);
      // A minute later the rates are back to zero.
      clock.advance(61_000);
      const later = (await get(operator, '/system/task-queues')).body.queues.find((q: { name: string }) => q.name === 'runs');
      expect(later).to.include({ addedLastMinute: 0, dispatchedLastMinute: 0, addRatePerSecond: 0 });
    });

    it('workflows are counted beside runs: overview by status, hybrid stats, the timers queue', async () => {
      const flowId = await client.newFlow(member);
      await client.addNode(member, flowId, node({ nodeType: 'transform', template: 'done' }));
      const created = await client.as(member, 'POST', '/workflows', { flowId });
      expect(created.status, created.text).to.equal(201);
      const workflowId = created.body.workflow.id;
      await waitUntil('workflow completed', async () => (await client.as(member, 'GET', `/workflows/${workflowId}`)).body.workflow?.status === 'COMPLETED');
      const overview = await waitUntil('workflow counted', async () => {
        const o = (await get(member, '/system/overview')).body;
        return o.workflows.byStatus.COMPLETED === 1 ? o : null;
      });
      expect(overview.workflows.total).to.equal(1);
      expect((await get(operator, '/system/overview')).body.workflows.total).to.equal(0);
      const hybrid = (await get(member, '/hybrid/stats?window=1h')).body;
      expect(hybrid.workflows).to.include({ started: 1, completed: 1, failed: 0, open: 0 });
      expect(hybrid.workflows.durationMs.samples).to.equal(1);
      expect(hybrid.total.completed).to.equal(hybrid.runs.completed + 1);

      // A workflow that waits for a signal holds a durable timer of an hour: scheduled, not due, canceled with its workflow.
      const waiter = await client.newFlow(member);
      await client.addNode(member, waiter, node({ nodeType: 'wait_signal', signalName: 'go' }));
      const open = await client.as(member, 'POST', '/workflows', { flowId: waiter });
      expect(open.status, open.text).to.equal(201);
      const timer = await client.as(member, 'POST', `/workflows/${open.body.workflow.id}/timers`, { name: 'reminder', delayMs: 3_600_000 });
      expect(timer.status, timer.text).to.equal(201);
      const timers = await waitUntil('timer scheduled', async () => {
        const q = ((await get(operator, '/system/task-queues')).body.queues as Array<Record<string, unknown>>).find((x) => x.name === 'timers');
        return q && q.addedLastMinute === 1 ? q : null;
      });
      expect(timers).to.include({ backlog: 0, backlogAgeMs: null, dispatchedLastMinute: 0 });
      const workflowsQueue = ((await get(operator, '/system/task-queues')).body.queues as Array<Record<string, unknown>>).find((x) => x.name === 'workflows');
      expect(workflowsQueue, 'a workflow waiting for a signal is not ready for a worker').to.include({ backlog: 0 });
      expect(workflowsQueue!.addedLastMinute).to.be.at.least(2);
      const terminated = await client.as(member, 'POST', `/workflows/${open.body.workflow.id}/cancel`, { terminate: true });
      expect(terminated.status, terminated.text).to.be.oneOf([200, 202]);
      await waitUntil('timer canceled with its workflow', async () => (await svc.services.readStore.collection('system_timers').count({ status: 'canceled' })) === 1);
    });

    it('workers: RUNNING with the runs it holds, LOST when its beats stop, SHUTTING_DOWN then STOPPED after a graceful stop', async () => {
      const services = svc.services;
      recovery = await startRunRecovery(
        { eventStore: services.eventStore, clock, logger: services.logger, runs: services.runs, queries: services.runRecovery, settings: { ...services.config, WORKER_HEARTBEAT_MS: BEAT_MS } },
        'test-worker',
        'worker',
        BEAT_MS,
      );
      const id = recovery.workerId;
      const workerOf = async () => ((await get(operator, '/system/workers')).body.items as Array<Record<string, unknown>>).find((w) => w.id === id);
      const listed = await waitUntil('worker listed', workerOf);
      expect(listed).to.include({ role: 'worker', pid: process.pid, heartbeatMs: BEAT_MS, status: 'RUNNING', stoppedAt: null, runsInHand: 0, workflowsInHand: 0 });
      // The consumers each process announced when it started (the dead-letter retrier delivers only to these); none announced: null.
      expect(listed.consumers).to.equal(null);
      const service = ((await get(operator, '/system/workers')).body.items as Array<Record<string, any>>).find((w) => w.host === 'test-service');
      expect(service?.consumers).to.include.members(['run-worker', 'workflow-worker']);

      // A run in the worker's hands (the run worker of this process runs it as test-worker@<id>).
      const flowId = await client.newFlow(member);
      await client.addNode(member, flowId, node({ nodeType: 'delay', delayMs: 20_000 }));
      const run = await client.as(member, 'POST', `/flows/${flowId}/run`, { inputs: {}, async: true });
      expect(run.status).to.equal(202);
      const holding = await waitUntil('run in hand', async () => {
        const w = await workerOf();
        return w && w.runsInHand === 1 ? w : null;
      });
      expect(holding.status).to.equal('RUNNING');
      const overview = (await get(operator, '/system/overview')).body;
      expect(overview.service.workers.alive).to.be.at.least(1);
      expect(overview.service.workers.byStatus.RUNNING).to.be.at.least(1);
      expect(overview.service.eventLog.headPosition).to.be.greaterThan(0);
      expect(overview.service.eventLog.adapter).to.equal(services.eventStore.adapter);
      if (mode === 'embedded') {
        expect(overview.service.eventLog.events).to.be.greaterThan(0);
        expect(overview.service.eventLog.bytes).to.be.greaterThan(0);
      }
      expect(overview.service.projections.items.map((p: { name: string }) => p.name)).to.include('processes');
      expect(overview.service.projections.maxLag).to.be.a('number');
      expect((await get(member, '/system/overview')).body.runs.byStatus.running).to.equal(1);
      expect((await client.as(member, 'POST', `/flows/${flowId}/stop`)).status).to.equal(200);
      await waitUntil('run stopped', async () => (await client.as(member, 'GET', `/processes/${run.body.processId}`)).body.process?.status === 'stopped');
      await waitUntil('run released', async () => (await workerOf())?.runsInHand === 0);

      // Silent for more than 3 of its intervals: LOST.
      clock.advance(3 * BEAT_MS + 1_000);
      expect((await workerOf())?.status).to.equal('LOST');
      expect((await get(operator, '/system/overview')).body.service.workers.byStatus.LOST).to.be.at.least(1);

      await recovery.stop();
      recovery = undefined;
      const stopping = await waitUntil('stop recorded', async () => {
        const w = await workerOf();
        return w?.stoppedAt ? w : null;
      });
      expect(stopping.status).to.equal('SHUTTING_DOWN');
      clock.advance(SHUTDOWN_TIMEOUT_MS + 1);
      expect((await workerOf())?.status).to.equal('STOPPED');
    });

    it('GET /metrics: Prometheus text with the conventional names, for the scrape token or an operator', async () => {
      const res = await call(svc.baseUrl, 'GET', '/metrics', undefined, { Authorization: `Bearer ${METRICS_TOKEN}` });
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      const { types, samples } = parsePrometheus(res.text);
      expect(Object.fromEntries([...types].filter(([name]) => name.startsWith('flowsvc_')))).to.deep.equal({
        flowsvc_http_requests_total: 'counter',
        flowsvc_http_request_duration_seconds: 'histogram',
        flowsvc_node_executions_total: 'counter',
        flowsvc_node_duration_seconds: 'histogram',
        flowsvc_llm_provider_calls_total: 'counter',
        flowsvc_llm_provider_call_duration_seconds: 'histogram',
        flowsvc_dead_letters_total: 'counter',
        flowsvc_projection_lag_events: 'gauge',
        flowsvc_event_log_head_position: 'gauge',
      });
      expect(types.get('process_cpu_seconds_total')).to.equal('counter');
      const sample = (name: string, labels: Record<string, string>) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
      expect(sample('flowsvc_http_requests_total', { method: 'POST', route: '/flows/{flowId}/run', status_code: '200' })?.value).to.equal(3);
      expect(sample('flowsvc_http_request_duration_seconds_count', { method: 'POST', route: '/flows/{flowId}/run', status_code: '200' })?.value).to.equal(3);
      expect(sample('flowsvc_http_request_duration_seconds_bucket', { route: '/flows/{flowId}/run', le: '+Inf' })?.value).to.equal(3);
      expect(sample('flowsvc_http_requests_total', { route: '/system/workers', status_code: '403' })?.value).to.equal(1);
      expect(sample('flowsvc_node_executions_total', { kind: 'llm', outcome: 'completed' })?.value).to.equal(3);
      // Both views of the registry agree (the 15-minute window still holds every node of this test).
      const perf = (await get(operator, '/metrics/performance')).body;
      const transforms = perf.nodes.find((n: { name: string }) => n.name === 'transform').windows['15m'].count;
      expect(transforms).to.be.at.least(1);
      expect(sample('flowsvc_node_executions_total', { kind: 'transform', outcome: 'completed' })?.value).to.equal(transforms);
      expect(sample('flowsvc_llm_provider_calls_total', { provider: 'offline', outcome: 'ok' })?.value).to.equal(3);
      expect(sample('flowsvc_projection_lag_events', { projection: 'processes' })?.value).to.be.a('number');
      expect(sample('flowsvc_event_log_head_position', {})?.value).to.be.greaterThan(0);
      // No raw ids in labels: every route label is a template.
      for (const s of samples.filter((x) => x.name === 'flowsvc_http_requests_total')) expect(s.labels.route).to.not.match(/[0-9a-f]{8}-[0-9a-f]{4}/);

      const byOperator = await get(operator, '/metrics');
      expect(byOperator.status).to.equal(200);
      parsePrometheus(byOperator.text);
    });
  });
}
