import { expect } from 'chai';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { waitUntil } from '../support/wait.js';
import { flowClient } from './flows-support.js';

/**
 * POST /processes/{processId}/stop stops one run, leaving the flow's other runs alone (the flow's
 * stop stops them all): a running run ends stopped without running the nodes after the one in
 * flight; a finished run answers 409 RUN_ALREADY_FINISHED; another tenant's run answers 404.
 */
const node = (data: Record<string, unknown>, x: number) => ({ type: 'custom', position: { x, y: 0 }, data });

for (const mode of availableModes()) {
  describe(`runs: stop one run (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let mallory: RegisteredUser;
    const client = flowClient(() => svc);
    const { as } = client;

    before(async () => {
      svc = await startTestService(mode);
      alice = await registerUser(svc.baseUrl);
      mallory = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
    });

    async function slowFlow(): Promise<{ flowId: string; last: string }> {
      const flowId = await client.newFlow(alice);
      const first = (await client.addNode(alice, flowId, node({ nodeType: 'delay', delayMs: 3000 }, 0))).id;
      const last = (await client.addNode(alice, flowId, node({ nodeType: 'transform', template: 'after the delay' }, 200))).id;
      const edge = await as(alice, 'POST', `/flows/${flowId}/connections`, { source: first, target: last });
      expect(edge.status, edge.text).to.equal(201);
      return { flowId, last };
    }
    const startAsync = async (flowId: string) => {
      const res = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs: {}, async: true });
      expect(res.status, res.text).to.equal(202);
      return res.body.processId as string;
    };
    const statusOf = async (processId: string) => (await as(alice, 'GET', `/processes/${processId}`)).body.process;

    it('stops one running run and leaves the flow\'s other run going; the node after the delay never runs', async () => {
      const { flowId, last } = await slowFlow();
      const victim = await startAsync(flowId);
      const other = await startAsync(flowId);
      await waitUntil('both runs running', async () => (await statusOf(victim)).status === 'running' && (await statusOf(other)).status === 'running');

      const stopped = await as(alice, 'POST', `/processes/${victim}/stop`);
      expect(stopped.status, stopped.text).to.equal(200);
      expect(stopped.body.process.processId).to.equal(victim);
      expect(['stopped', 'running']).to.include(stopped.body.process.status);
      if (stopped.body.process.status === 'running') expect(stopped.body.process.stopRequested).to.equal(true);

      await waitUntil('the victim stopped', async () => (await statusOf(victim)).status === 'stopped', 20_000);
      await waitUntil('the other run completed', async () => (await statusOf(other)).status === 'completed', 20_000);
      const victimRun = await statusOf(victim);
      const lastNode = (victimRun.nodes ?? []).find((n: { nodeId: string }) => n.nodeId === last);
      expect(lastNode, 'the node after the delay is listed').to.exist;
      expect(lastNode.status, 'the node after the delay').not.to.equal('completed');

      const again = await as(alice, 'POST', `/processes/${victim}/stop`);
      expect(again.status, again.text).to.equal(409);
      expect(again.body.error.code).to.equal('RUN_ALREADY_FINISHED');
      expect(again.body.error.details.status).to.equal('stopped');
      const finished = await as(alice, 'POST', `/processes/${other}/stop`);
      expect(finished.status).to.equal(409);
      expect(finished.body.error.details.status).to.equal('completed');
    });

    it("answers 404 for another tenant's run and for an unknown id, and the run goes on", async () => {
      const { flowId } = await slowFlow();
      const processId = await startAsync(flowId);
      const theirs = await as(mallory, 'POST', `/processes/${processId}/stop`);
      expect(theirs.status, theirs.text).to.equal(404);
      expect(theirs.body.error.code).to.equal('PROCESS_NOT_FOUND');
      const unknown = await as(alice, 'POST', '/processes/00000000-0000-4000-8000-000000000000/stop');
      expect(unknown.status).to.equal(404);
      await waitUntil('the run completed', async () => (await statusOf(processId)).status === 'completed', 20_000);
    });
  });
}
