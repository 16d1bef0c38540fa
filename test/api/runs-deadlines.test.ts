import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { requestRun } from '../../commands/runs.js';
import { startRunRecovery, type RunRecovery } from '../../consumers/runs-recovery.js';
import { getProcess } from '../../projections/runs.js';
import { TestClock } from '../support/clock.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type Mode, type TestService } from '../support/test-service.js';
import { flowClient } from './flows-support.js';

/**
 * Runs never wait forever (issue 21, item 7): a queued run nobody claims is claimed by the
 * workers' sweep after RUN_CLAIM_TIMEOUT_MS, or timed out past RUN_TIMEOUT_MS; a run longer than
 * RUN_TIMEOUT_MS ends `timed_out` with its in-flight node aborted, sync or async.
 */

const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });
const CLAIM_TIMEOUT_MS = 30_000;
const RUN_TIMEOUT_MS = 120_000;

/**
 * The whole service like startTestService, but without the run worker's consumer: a RunRequested
 * reaches nobody, as when the bus lost it or every worker was down when it was published.
 */
/** The whole service but the run-worker consumer: runs stay queued until a sweep or the test acts. */
const startWithoutRunWorker = (mode: Mode, extra: Record<string, string>, clock: TestClock): Promise<TestService> =>
  startTestService(mode, extra, { clock, withoutConsumers: ['run-worker'] });

for (const mode of availableModes()) {
  describe(`runs nobody claimed: the workers' sweep (${mode})`, function () {
    this.timeout(60_000);
    const clock = new TestClock();
    let svc: TestService;
    let owner: RegisteredUser;
    const recoveries: RunRecovery[] = [];
    const client = flowClient(() => svc);

    before(async () => {
      svc = await startWithoutRunWorker(mode, { RUN_CLAIM_TIMEOUT_MS: String(CLAIM_TIMEOUT_MS), RUN_TIMEOUT_MS: String(RUN_TIMEOUT_MS) }, clock);
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => {
      for (const r of recoveries) await r.stop();
      await svc?.stop();
    });

    /** A recovering worker started now, with no interval tick during the test: sweeps are called by hand. */
    const startWorker = async (name: string) => {
      const { services } = svc;
      const ports = { eventStore: services.eventStore, clock, logger: services.logger, runs: services.runs, queries: services.runRecovery, settings: services.config };
      const recovery = await startRunRecovery(ports, name, 'worker', 600_000);
      recoveries.push(recovery);
      return recovery;
    };
    const transformFlow = async () => {
      const flowId = await client.newFlow(owner);
      await client.addNode(owner, flowId, node({ nodeType: 'transform', template: 'swept {{inputs.word}}' }));
      return flowId;
    };
    const asyncRun = async (flowId: string, word: string) => {
      const res = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { word }, async: true });
      expect(res.status, res.text).to.equal(202);
      return res.body.processId as string;
    };
    const processOf = async (processId: string) => (await client.as(owner, 'GET', `/processes/${processId}`)).body.process;
    const eventsOf = async (processId: string) => (await client.as(owner, 'GET', `/processes/${processId}/events?limit=100`)).body.events as Array<{ type: string; data: Record<string, unknown> }>;

    it('a queued run nobody claimed is claimed by one sweeping worker after RUN_CLAIM_TIMEOUT_MS and runs to the end', async () => {
      const flowId = await transformFlow();
      const processId = await asyncRun(flowId, 'late');
      // The sweep finds its candidates in the runs' read model, which the 202 does not wait for.
      await waitUntil('the run in the read model', async () => (await getProcess(svc.services.readStore, processId, null))?.status === 'queued');
      // Workers that start after the request: nothing in their memory knows the run; the sweep finds it from state.
      const [a, b] = [await startWorker('sweeper-a'), await startWorker('sweeper-b')];
      expect((await a.sweep()).claimed, 'not due yet').to.deep.equal([]);
      expect((await processOf(processId)).status).to.equal('queued');

      clock.advance(CLAIM_TIMEOUT_MS + 1_000);
      const [ra, rb] = await Promise.all([a.sweep(), b.sweep()]);
      expect([...ra.claimed, ...rb.claimed], 'exactly one worker claims it').to.deep.equal([processId]);
      expect([...ra.timedOut, ...rb.timedOut]).to.deep.equal([]);
      const done = await waitUntil('the swept run to complete', async () => {
        const p = await processOf(processId);
        return p?.status === 'completed' ? p : null;
      });
      expect(done.nodes[0].output).to.equal('swept late');
      const events = await eventsOf(processId);
      const claims = events.filter((e) => e.type === 'RunStarted');
      expect(claims).to.have.length(1);
      expect(claims[0].data.unclaimedForMs).to.be.at.least(CLAIM_TIMEOUT_MS);
      expect(claims[0].data.workerId).to.match(/^sweeper-[ab]@/);
    });

    it('a queued run past RUN_TIMEOUT_MS, and a running run whose executor is gone, end timed_out once', async () => {
      const flowId = await transformFlow();
      const queuedId = await asyncRun(flowId, 'never');
      // Claimed by a worker that never executes it (it died right after claiming, and no heartbeat tells).
      const orphanId = randomUUID();
      const { services } = svc;
      const context = { actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: clock.now() };
      await requestRun(services.eventStore, context, orphanId, { flowId, mode: 'flow', inputs: {}, async: true, requestedBy: owner.user.id, source: 'api', scope: null, claimBy: 'gone@ghost-host:1:x' });
      await waitUntil('the orphan in the read model', async () => (await getProcess(services.readStore, orphanId, null))?.status === 'running');
      const [a, b] = [await startWorker('sweeper-c'), await startWorker('sweeper-d')];

      clock.advance(RUN_TIMEOUT_MS + 1_000);
      const [ra, rb] = await Promise.all([a.sweep(), b.sweep()]);
      expect([...ra.timedOut, ...rb.timedOut].sort()).to.deep.equal([queuedId, orphanId].sort());
      expect([...ra.claimed, ...rb.claimed]).to.deep.equal([]);

      for (const id of [queuedId, orphanId]) {
        const p = await waitUntil('timed_out in the run\'s stream', async () => {
          const doc = await processOf(id);
          return doc?.status === 'timed_out' ? doc : null;
        });
        expect(p.error.code).to.equal('RUN_TIMED_OUT');
        expect(p.error.reason).to.match(/RUN_TIMEOUT_MS/);
        const events = await eventsOf(id);
        expect(events.filter((e) => e.type === 'RunTimedOut'), 'one terminal event').to.have.length(1);
        expect(events.at(-1)!.data.timeoutMs).to.equal(RUN_TIMEOUT_MS);
      }
      // Swept again later: nothing more happens.
      clock.advance(1_000);
      expect(await a.sweep()).to.deep.equal({ claimed: [], timedOut: [] });
      // The running list reads the read model, which the sweep's appends do not wait for.
      await waitUntil('neither run listed as running', async () => {
        const running = await client.as(owner, 'GET', '/processes/running');
        const ids = running.body.items.map((p: { processId: string }) => p.processId);
        return !ids.includes(queuedId) && !ids.includes(orphanId);
      });
    });
  });

  describe(`RUN_TIMEOUT_MS bounds a whole run (${mode})`, function () {
    this.timeout(60_000);
    const TIMEOUT_MS = 1_500;
    let svc: TestService;
    let owner: RegisteredUser;
    const client = flowClient(() => svc);
    before(async () => {
      svc = await startTestService(mode, { RUN_TIMEOUT_MS: String(TIMEOUT_MS), NODE_TIMEOUT_MS: '30000' });
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    /** input → delay 20 s → transform. */
    const slowFlow = async () => {
      const flowId = await client.newFlow(owner);
      const ids: string[] = [];
      for (const [i, data] of [{ nodeType: 'input', inputKey: 'word' }, { nodeType: 'delay', delayMs: 20_000 }, { nodeType: 'transform', template: 'never' }].entries()) {
        ids.push((await client.addNode(owner, flowId, node(data, i * 100))).id);
      }
      for (const [source, target] of [[ids[0], ids[1]], [ids[1], ids[2]]]) {
        const res = await client.as(owner, 'POST', `/flows/${flowId}/connections`, { source, target });
        expect(res.status, res.text).to.equal(201);
      }
      return { flowId, ids };
    };
    const expectTimedOut = (process: { status: string; error: { code: string }; nodes: Array<{ status: string; error: { code: string } | null }> }) => {
      expect(process.status).to.equal('timed_out');
      expect(process.error.code).to.equal('RUN_TIMED_OUT');
      expect(process.nodes[0].status).to.equal('completed');
      expect(process.nodes[1].status).to.equal('failed');
      expect(process.nodes[1].error!.code).to.equal('ABORTED');
      expect(process.nodes[2].status).to.equal('pending');
    };

    it('a sync run answers with the timed-out state once RUN_TIMEOUT_MS passed; the delay node was aborted', async () => {
      const { flowId } = await slowFlow();
      const started = Date.now();
      const res = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { word: 'x' } });
      const took = Date.now() - started;
      expect(res.status, res.text).to.equal(200);
      expect(res.body.success).to.equal(false);
      expectTimedOut(res.body);
      expect(took, 'answered at the run deadline, not after the 20 s delay').to.be.within(TIMEOUT_MS - 100, 10_000);
      expect(svc.services.runs.isExecuting(res.body.processId)).to.equal(false);

      const proc = await client.as(owner, 'GET', `/processes/${res.body.processId}`);
      expectTimedOut(proc.body.process);
      const events = (await client.as(owner, 'GET', `/processes/${res.body.processId}/events`)).body.events as Array<{ type: string }>;
      expect(events.map((e) => e.type)).to.deep.equal(['RunRequested', 'RunStarted', 'NodeStarted', 'NodeCompleted', 'NodeStarted', 'RunTimedOut']);
    });

    it('a single-node sync run answers 504 RUN_TIMED_OUT', async () => {
      const { flowId, ids } = await slowFlow();
      const res = await client.as(owner, 'POST', `/flows/${flowId}/nodes/${ids[1]}/process`, { inputs: {} });
      expect(res.status, res.text).to.equal(504);
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('RUN_TIMED_OUT');
      expect(res.body.error.details).to.include({ nodeId: ids[1], status: 'timed_out' });
    });

    it('an async run ends timed_out in its worker; GET /processes/{id} and its events show it', async () => {
      const { flowId } = await slowFlow();
      const res = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { word: 'x' }, async: true });
      expect(res.status, res.text).to.equal(202);
      const processId = res.body.processId as string;
      const started = Date.now();
      const proc = await waitUntil('timed out', async () => {
        const p = (await client.as(owner, 'GET', `/processes/${processId}`)).body.process;
        return p?.status === 'timed_out' ? p : null;
      });
      expect(Date.now() - started).to.be.below(10_000);
      expectTimedOut(proc);
      const events = (await client.as(owner, 'GET', `/processes/${processId}/events`)).body.events as Array<{ type: string; data: Record<string, unknown> }>;
      expect(events.filter((e) => e.type === 'RunTimedOut')).to.have.length(1);
      expect(events.at(-1)!.type).to.equal('RunTimedOut');
      await waitUntil('the executor to let go', async () => !svc.services.runs.isExecuting(processId));
    });
  });
}
