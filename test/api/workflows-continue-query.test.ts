import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';
import { answer } from '../support/api-client.js';
import { createWorkflow } from '../../commands/workflows.js';
import { continuationId } from '../../consumers/workflows.js';

/**
 * Issue 36 item 3: a workflow that loops by continuing as new from its own graph (continue_as_new
 * node), queries declared by the flow (query node) answered from the state with no worker, and
 * workflow node timings in the metrics.
 */
const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });

for (const mode of availableModes()) {
  describe(`workflows: continue_as_new and query nodes, node timings (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let operator: RegisteredUser;
    const client = flowClient(() => svc);
    const operatorEmail = `ops-${Date.now()}@example.test`;

    before(async () => {
      svc = await startTestService(mode, { ADMIN_EMAILS: operatorEmail });
      owner = await registerUser(svc.baseUrl);
      operator = await registerUser(svc.baseUrl, { email: operatorEmail });
    });
    after(async () => {
      await svc?.stop();
    });

    const api = () => client.api(owner);
    const get = async (id: string) => (await answer(api().GET('/workflows/{workflowId}', { params: { path: { workflowId: id } } }))).body.workflow;
    const query = (id: string, name: string) => answer(api().POST('/workflows/{workflowId}/query', { params: { path: { workflowId: id } }, body: { name } }));
    const signal = async (id: string, payload: unknown) => {
      const res = await answer(api().POST('/workflows/{workflowId}/signal', { params: { path: { workflowId: id } }, body: { name: 'tick', payload } }));
      expect(res.status, res.text).to.equal(202);
    };
    /** wait_signal tick → transform → set_state {last} → continue_as_new {round}; a query node on the side. */
    async function loopingFlow() {
      const flowId = await client.newFlow(owner);
      const add = async (data: Record<string, unknown>, x: number) => (await client.addNode(owner, flowId, node(data, x))).id;
      const wait = await add({ nodeType: 'wait_signal', signalName: 'tick' }, 0);
      const echo = await add({ nodeType: 'transform', template: 'tick {{previous.n}}' }, 100);
      const set = await add({ nodeType: 'set_state', values: { last: '{{nodes.' + wait + '.output.n}}', said: '{{previous}}' } }, 200);
      const next = await add({ nodeType: 'continue_as_new', input: { round: '{{state.last}}' } }, 300);
      await add({ nodeType: 'query', queryName: 'progress', result: { last: '{{state.last}}', round: '{{inputs.round}}', line: 'round {{inputs.round}}, said {{state.said}}' } }, 400);
      for (const [source, target] of [[wait, echo], [echo, set], [set, next]]) {
        const res = await answer(api().POST('/flows/{flowId}/connections', { params: { path: { flowId } }, body: { source, target } }));
        expect(res.status, res.text).to.equal(201);
      }
      return flowId;
    }
    const continuedAs = (id: string) =>
      waitUntil(`workflow ${id} continued as new`, async () => {
        const wf = await get(id);
        return wf?.continuedAs ? (wf.continuedAs as string) : null;
      }, 30_000); // a worker over Kafka on a loaded machine; not a timing assertion

    it('loops through continue_as_new: each execution closes naming the next, which starts with the rendered input, the state and an empty history', async () => {
      const flowId = await loopingFlow();
      const created = await answer(api().POST('/workflows', { body: { flowId, input: { round: 0 }, searchAttributes: { team: 'loop' } } }));
      expect(created.status, created.text).to.equal(201);
      const first = created.body.workflow;
      expect(first.waitingOn).to.deep.include({ kind: 'signal', name: 'tick' });

      await signal(first.id, { n: 1 });
      const secondId = await continuedAs(first.id);
      const closed = await get(first.id);
      expect(closed).to.deep.include({ status: 'COMPLETED', continuedAs: secondId });
      const second = await waitUntil('the next execution waits for its signal', async () => {
        const wf = await get(secondId);
        return wf?.waitingOn ? wf : null;
      }, 30_000);
      expect(second).to.deep.include({ flowId, continuedFrom: first.id, status: 'RUNNING' });
      expect(second.input).to.deep.equal({ round: 1 });
      expect(second.state).to.deep.equal({ last: 1, said: 'tick 1' });
      expect(second.searchAttributes ?? {}).to.deep.include({ team: 'loop' });
      const history = await answer(api().GET('/workflows/{workflowId}/history', { params: { path: { workflowId: secondId } } }));
      expect(history.status, history.text).to.equal(200);
      expect(history.body.events.map((e: { type: string }) => e.type)).to.not.include('SignalReceived');

      await signal(secondId, { n: 2 });
      const thirdId = await continuedAs(secondId);
      expect(thirdId).to.not.equal(secondId).and.not.equal(first.id);
      const third = await waitUntil('the third execution waits', async () => {
        const wf = await get(thirdId);
        return wf?.waitingOn ? wf : null;
      }, 30_000);
      expect(third).to.deep.include({ continuedFrom: secondId });
      expect(third.input).to.deep.equal({ round: 2 });
      expect(third.state).to.deep.include({ last: 2 });
    });

    it('after a crash between starting the next execution and closing this one, the node closes this one naming it and starts no other', async () => {
      const flowId = await loopingFlow();
      const wf = (await answer(api().POST('/workflows', { body: { flowId, input: { round: 0 } } }))).body.workflow;
      const continueNodeId = (await get(wf.id)).nodes.find((n: { nodeType?: string; data?: { nodeType?: string } }) => (n.nodeType ?? n.data?.nodeType) === 'continue_as_new')?.nodeId;
      expect(continueNodeId, 'the continue_as_new node is listed').to.be.a('string');
      // What a worker that died half-way leaves behind: the next execution, already created.
      const nextId = continuationId(wf.id, continueNodeId);
      const context = { actorId: null, orgId: null, workspaceId: null, correlationId: 'crash-test', causationId: null, requestId: null, now: new Date() };
      await createWorkflow(svc.services.eventStore, context, { workflowId: nextId, flowId, input: { round: 'left behind' }, start: true, idempotencyPolicy: 'reject_duplicate', searchAttributes: {}, memo: {}, createdBy: null, scope: null, state: {}, continuedFrom: wf.id });
      await signal(wf.id, { n: 9 });
      expect(await continuedAs(wf.id)).to.equal(nextId);
      expect((await get(nextId)).input).to.deep.equal({ round: 'left behind' });
    });

    it('a query node answers its result template over the state, on an open and on a closed execution; unknown names list the declared queries', async () => {
      const flowId = await loopingFlow();
      const wf = (await answer(api().POST('/workflows', { body: { flowId, input: { round: 7 } } }))).body.workflow;
      const before = await query(wf.id, 'progress');
      expect(before.status, before.text).to.equal(200);
      expect(before.body.result).to.deep.equal({ last: '', round: 7, line: 'round 7, said ' });
      const missing = await query(wf.id, 'nothing');
      expectError(missing, 404, 'QUERY_NOT_FOUND');
      expect(missing.body.error.details.queries).to.deep.equal(['progress']);

      await signal(wf.id, { n: 3 });
      await continuedAs(wf.id);
      // Closed, the execution still answers from its last state.
      const after = await query(wf.id, 'progress');
      expect(after.body.result).to.deep.equal({ last: 3, round: 7, line: 'round 7, said tick 3' });
    });

    it('continue_as_new and query nodes fail a plain run with WORKFLOW_ONLY_NODE', async () => {
      const flowId = await client.newFlow(owner);
      await client.addNode(owner, flowId, node({ nodeType: 'continue_as_new' }));
      const run = await call(svc.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: {} }, owner.auth);
      expect(run.body.status, run.text).to.equal('failed');
      expect(JSON.stringify(run.body)).to.include('WORKFLOW_ONLY_NODE');
    });

    it('a continue_as_new node run alone is refused with 400 WORKFLOW_ONLY_NODE, and no run is started', async () => {
      const flowId = await client.newFlow(owner);
      const nodeId = (await client.addNode(owner, flowId, node({ nodeType: 'continue_as_new' }))).id;
      const res = await call(svc.baseUrl, 'POST', `/flows/${flowId}/nodes/${nodeId}/process`, { inputs: {} }, owner.auth);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.error.code).to.equal('WORKFLOW_ONLY_NODE');
      expect(res.body.error.details).to.include({ field: 'nodeId', nodeId, nodeType: 'continue_as_new' });
      const processes = await call(svc.baseUrl, 'GET', `/flows/${flowId}/processes`, undefined, owner.auth);
      expect(processes.status, processes.text).to.equal(200);
      expect(processes.body.items).to.deep.equal([]);
    });

    it("workflow nodes run by a worker are timed in the metrics as workflow:<kind>", async () => {
      const flowId = await loopingFlow();
      const wf = (await answer(api().POST('/workflows', { body: { flowId, input: { round: 0 } } }))).body.workflow;
      await signal(wf.id, { n: 5 });
      await continuedAs(wf.id);
      const perf = await call(svc.baseUrl, 'GET', '/metrics/performance', undefined, operator.auth);
      expect(perf.status, perf.text).to.equal(200);
      const names = perf.body.nodes.map((s: { name: string }) => s.name);
      expect(names).to.include.members(['workflow:transform', 'workflow:continue_as_new']);
      const transform = perf.body.nodes.find((s: { name: string }) => s.name === 'workflow:transform');
      expect(transform.windows['15m'].count).to.be.at.least(1);
      const text = await fetch(`${svc.baseUrl}/metrics`, { headers: operator.auth });
      expect(await text.text()).to.match(/flowsvc_node_executions_total\{kind="workflow:transform",outcome="completed"\} \d/);
    });
  });
}
