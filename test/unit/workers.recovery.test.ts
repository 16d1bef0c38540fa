import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { requestRun, loadRun } from '../../commands/runs.js';
import { executeWorkerCommand } from '../../commands/workers.js';
import { startRunRecovery, type RunRecovery } from '../../consumers/runs-recovery.js';
import { getProcess } from '../../projections/runs.js';
import { getWorker } from '../../projections/workers.js';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';

const context = () => ({ actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() });

/**
 * Two workers recovering at once race for the same run of a dead worker: exactly one takes it over
 * (ResumeRun is appended with the revision it judged on), and the run completes once.
 */
for (const mode of availableModes()) {
  describe(`run recovery race (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    const recoveries: RunRecovery[] = [];
    before(async () => (svc = await startTestService(mode)));
    after(async () => {
      for (const r of recoveries) await r.stop();
      await svc?.stop();
    });

    it('one recovering worker wins, the other moves on; a live holder is left alone', async () => {
      const { services } = svc;
      const ports = { eventStore: services.eventStore, clock: { now: services.now }, logger: services.logger, runs: services.runs, queries: services.runRecovery, settings: services.config };
      for (const name of ['recoverer-a', 'recoverer-b']) recoveries.push(await startRunRecovery(ports, name, 'worker', 60_000));
      const user = await registerUser(svc.baseUrl);
      const flow = await call(svc.baseUrl, 'POST', '/flows', { name: 'race' }, user.auth);
      const flowId = flow.body.flow.id as string;
      const n = await call(svc.baseUrl, 'POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: 'hi {{inputs.x}}' } }, user.auth);
      expect(n.status, n.text).to.equal(201);

      // A live ghost: presence beating; its run must not be taken.
      const ghost = 'ghost-host:1:alive';
      await executeWorkerCommand(services.eventStore, context(), ghost, { type: 'StartWorker', workerId: ghost, host: 'ghost-host', pid: 1, role: 'worker', heartbeatMs: 60_000 });
      const base = { flowId, mode: 'flow' as const, inputs: { x: 1 }, async: true, requestedBy: user.user.id, source: 'api', scope: null };
      const liveRun = randomUUID();
      await requestRun(services.eventStore, context(), liveRun, { ...base, claimBy: `w@${ghost}` });
      // A dead one: it stopped while holding a run.
      const dead = 'ghost-host:2:dead';
      await executeWorkerCommand(services.eventStore, context(), dead, { type: 'StartWorker', workerId: dead, host: 'ghost-host', pid: 2, role: 'worker', heartbeatMs: 60_000 });
      await executeWorkerCommand(services.eventStore, context(), dead, { type: 'StopWorker' });
      const deadRun = randomUUID();
      await requestRun(services.eventStore, context(), deadRun, { ...base, claimBy: `w@${dead}` });

      await waitUntil('projections', async () => (await getProcess(services.readStore, deadRun, null)) && (await getProcess(services.readStore, liveRun, null)) && (await getWorker(services.readStore, dead))?.stoppedAt);
      const [a, b] = await Promise.all(recoveries.map((r) => r.scan()));
      expect([...a, ...b]).to.deep.equal([deadRun]);

      const done = await waitUntil('the resumed run to complete', async () => {
        const run = await loadRun(services.eventStore, deadRun);
        return run.status === 'completed' ? run : null;
      });
      expect(done.nodes[Object.keys(done.nodes)[0]].output).to.equal('hi 1');
      const events = await services.eventStore.readStream(`run-${deadRun}`);
      expect(events.filter((e) => e.type === 'RunResumed')).to.have.length(1);
      expect(events.filter((e) => e.type === 'NodeCompleted')).to.have.length(1);
      expect((await loadRun(services.eventStore, liveRun)).status).to.equal('running');
    });
  });
}
