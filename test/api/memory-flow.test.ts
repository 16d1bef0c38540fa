import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { flowClient } from './flows-support.js';

const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });

for (const mode of availableModes()) {
  describe(`memory node in a flow run (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    const client = flowClient(() => svc);
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    async function connect(flowId: string, source: string, target: string) {
      const c = await client.as(owner, 'POST', `/flows/${flowId}/connections`, { source, target });
      expect(c.status, c.text).to.equal(201);
    }

    it('saves then searches with templated text, metadata and filters; the memories are the flow owner\'s', async () => {
      const flowId = await client.newFlow(owner);
      const saveNode = await client.addNode(owner, flowId, node({ nodeType: 'memory', memoryOperation: 'save', text: '{{inputs.fact}}', metadata: { topic: '{{inputs.topic}}' }, startNode: true }));
      const searchNode = await client.addNode(
        owner,
        flowId,
        node({ nodeType: 'memory', memoryOperation: 'search', query: '{{inputs.question}}', filters: { topic: '{{inputs.topic}}' }, limit: 3 }, 200),
      );
      const answer = await client.addNode(owner, flowId, node({ nodeType: 'transform', template: 'Known: {{previous}}' }, 400));
      await connect(flowId, saveNode.id, searchNode.id);
      await connect(flowId, searchNode.id, answer.id);

      const first = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { fact: 'Grace prefers window seats on long flights', topic: 'travel', question: 'which seat on flights?' } });
      expect(first.status, first.text).to.equal(200);
      expect(first.body.status, first.text).to.equal('completed');
      const byId = Object.fromEntries(first.body.nodes.map((n: { nodeId: string }) => [n.nodeId, n]));
      const saved = byId[saveNode.id].output;
      expect(saved).to.deep.include({ text: 'Grace prefers window seats on long flights', metadata: { topic: 'travel' } });
      expect(saved.scope).to.deep.equal({ userId: owner.user.id, agentId: null, runId: first.body.processId });
      expect(byId[searchNode.id].output).to.equal('Grace prefers window seats on long flights');
      expect(byId[answer.id].output).to.equal('Known: Grace prefers window seats on long flights');

      // A second run finds both facts (userId defaults to the owner across runs); the filter keeps another topic out.
      const second = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { fact: 'Grace booked a flight to Oslo', topic: 'travel', question: 'flights seats' } });
      expect(second.body.status, second.text).to.equal('completed');
      const search2 = second.body.nodes.find((n: { nodeId: string }) => n.nodeId === searchNode.id);
      expect(search2.output.split('\n')).to.have.members(['Grace prefers window seats on long flights', 'Grace booked a flight to Oslo']);
      const third = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { fact: 'Grace eats no meat', topic: 'food', question: 'flights' } });
      expect(third.body.nodes.find((n: { nodeId: string }) => n.nodeId === searchNode.id).output).to.equal('');

      // Over the API: the owner sees them with their history (source: the run); another user does not.
      const api = await call(svc.baseUrl, 'POST', '/db/memory', { operation: 'search', scope: { userId: owner.user.id }, query: 'Grace' }, owner.auth);
      expect(api.body.results).to.have.length(3);
      const history = await call(svc.baseUrl, 'GET', `/db/memory/${saved.id}/history`, undefined, owner.auth);
      expect(history.body.items[0]).to.deep.include({ action: 'saved', source: `run:${first.body.processId}`, by: owner.user.id });
      const foreign = await call(svc.baseUrl, 'POST', '/db/memory', { operation: 'search', scope: { userId: owner.user.id }, query: 'Grace' }, other.auth);
      expect(foreign.body.results).to.deep.equal([]);
    });

    it('a failing memory operation fails the node with its code (update of an unknown memory)', async () => {
      const flowId = await client.newFlow(owner);
      await client.addNode(owner, flowId, node({ nodeType: 'memory', memoryOperation: 'update', memoryId: '{{inputs.id}}', text: 'new' }));
      const res = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { id: 'nope' } });
      expect(res.body, res.text).to.deep.include({ success: false, status: 'failed' });
      expect(res.body.error.code).to.equal('NODE_FAILED');
      expect(res.body.nodes[0]).to.deep.include({ status: 'failed', error: { code: 'MEMORY_NOT_FOUND', message: 'memory not found' } });
    });
  });
}
