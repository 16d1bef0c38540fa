import { expect } from 'chai';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';

/**
 * Issue 33 item 2: GET /processes/{a}/diff/{b} compares two runs node by node and names exactly
 * the node whose settings changed, the nodes its change reached, and nodes added or removed.
 */
const transform = (template: string, x: number) => ({ type: 'custom', position: { x, y: 0 }, data: { nodeType: 'transform', template } });

for (const mode of availableModes()) {
  describe(`runs: diff of two runs (${mode})`, function () {
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

    const run = async (flowId: string, inputs: Record<string, unknown>) => {
      const res = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.status, res.text).to.equal('completed');
      return res.body.processId as string;
    };
    const connect = async (flowId: string, source: string, target: string) => {
      const res = await as(alice, 'POST', `/flows/${flowId}/connections`, { source, target });
      expect(res.status, res.text).to.equal(201);
      return res.body.connection?.id ?? res.body.edge?.id ?? res.body.id;
    };

    it('names the node whose settings changed, shows how its output and the next input changed, and the nodes added', async () => {
      const flowId = await client.newFlow(alice);
      const a = (await client.addNode(alice, flowId, transform('hello {{inputs.q}}', 0))).id;
      const b = (await client.addNode(alice, flowId, transform('{{previous}} world', 200))).id;
      const c = (await client.addNode(alice, flowId, transform('{{previous}}!', 400))).id;
      await connect(flowId, a, b);
      await connect(flowId, b, c);
      const first = await run(flowId, { q: 'there' });

      const flow = await client.getFlow(alice, flowId);
      const nodeB = flow.nodes.find((n: { id: string }) => n.id === b);
      const changed = await as(alice, 'PUT', `/flows/${flowId}/nodes/${b}`, { data: { ...nodeB.data, template: '{{previous}} moon' } });
      expect(changed.status, changed.text).to.equal(200);
      const second = await run(flowId, { q: 'there' });

      const diff = await as(alice, 'GET', `/processes/${first}/diff/${second}`);
      expect(diff.status, diff.text).to.equal(200);
      expect(diff.body.a).to.include({ processId: first, flowId, status: 'completed' });
      expect(diff.body.b.flowVersion).to.be.greaterThan(diff.body.a.flowVersion);
      expect(diff.body.inputs).to.deep.equal([]);
      expect(diff.body.definition).to.deep.equal({ nodesAdded: [], nodesRemoved: [], nodesChanged: [b], edgesAdded: [], edgesRemoved: [] });
      const byId = Object.fromEntries(diff.body.nodes.map((n: { nodeId: string }) => [n.nodeId, n]));
      expect(byId[a]).to.include({ change: 'same', nodeType: 'transform' });
      expect(byId[b].change).to.equal('changed');
      expect(byId[b].definition).to.deep.equal([{ op: 'replace', path: '/template', value: '{{previous}} moon' }]);
      expect(byId[b].output).to.deep.equal([{ op: 'replace', path: '', value: 'hello there moon' }]);
      expect(byId[b].a).to.include({ status: 'completed' });
      // C's settings did not change, what reached it did.
      expect(byId[c].change).to.equal('changed');
      expect(byId[c].definition).to.deep.equal([]);
      expect(byId[c].input).to.deep.equal([{ op: 'replace', path: `/upstream/${b}`, value: 'hello there moon' }]);
      expect(byId[c].output).to.deep.equal([{ op: 'replace', path: '', value: 'hello there moon!' }]);

      const d = (await client.addNode(alice, flowId, transform('{{previous}}?', 600))).id;
      const edge = await connect(flowId, c, d);
      const third = await run(flowId, { q: 'you' });
      const added = await as(alice, 'GET', `/processes/${second}/diff/${third}`);
      expect(added.status, added.text).to.equal(200);
      expect(added.body.inputs).to.deep.equal([{ op: 'replace', path: '/q', value: 'you' }]);
      expect(added.body.definition.nodesAdded).to.deep.equal([d]);
      expect(added.body.definition.edgesAdded).to.deep.equal([edge]);
      const nodeD = added.body.nodes.find((n: { nodeId: string }) => n.nodeId === d);
      expect(nodeD).to.include({ change: 'added', a: null });
      expect(nodeD.b).to.include({ status: 'completed' });
      // Reversed, the node is removed.
      const reversed = await as(alice, 'GET', `/processes/${third}/diff/${second}`);
      expect(reversed.body.definition.nodesRemoved).to.deep.equal([d]);
    });

    it("answers 404 for another tenant's run or an unknown one, naming which, and 400 for a bad id", async () => {
      const flowId = await client.newFlow(alice);
      await client.addNode(alice, flowId, transform('x', 0));
      const mine = await run(flowId, {});
      const other = await as(mallory, 'GET', `/processes/${mine}/diff/${mine}`);
      expectError(other, 404, 'PROCESS_NOT_FOUND');
      const unknown = await as(alice, 'GET', `/processes/${mine}/diff/00000000-0000-4000-8000-000000000000`);
      expectError(unknown, 404, 'PROCESS_NOT_FOUND');
      expect(unknown.body.error.details.processId).to.equal('00000000-0000-4000-8000-000000000000');
      expectError(await as(alice, 'GET', `/processes/${mine}/diff/${'x'.repeat(300)}`), 400, 'VALIDATION_FAILED');
    });
  });
}
