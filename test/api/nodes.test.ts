/**
 * Nodes over real HTTP: the seed's add-node contract to the letter, then list, update, delete,
 * duplicate, validate and node types — each with its error statuses. Node history, permissions
 * and tenant isolation are in nodes-history.test.ts. Runs on every mode of availableModes().
 */
import { expect } from 'chai';
import { MAX_WEBHOOK_TIMEOUT_MS } from '../../domain/flows/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient, llmData, transformNode, type Auth } from './flows-support.js';

/** The seed's add-node body with every field of `data` set (and one the service does not know). */
function fullNodeBody(targetNodeId: string) {
  return {
    type: 'custom',
    position: { x: 120.5, y: -40 },
    data: {
      agentName: 'Support triage',
      llm: 'openai',
      model: 'gpt-4o-mini',
      prompt: 'Classify this ticket: {{inputs.ticket}}',
      agentObjective: 'route tickets to the right team',
      nodeType: 'llm',
      isAsync: false,
      startNode: true,
      url: 'https://example.com/docs',
      conditions: [
        { prompt: 'Is it about billing?', targetNodeId, usePrompt: true, operator: 'contains', value: 'billing' },
        { prompt: '', targetNodeId, usePrompt: false, operator: 'not_equals', value: 'spam' },
      ],
      webhookConfig: { url: 'https://hooks.example.com/tickets', method: 'POST', headers: { 'X-Team': 'support', Authorization: 'Bearer abc' }, timeout: 5000 },
      variables: { team: 'support', retries: 2, nested: { levels: [1, 2, 3] } },
      colour: '#ff8800',
    },
  };
}

for (const mode of availableModes()) {
  describe(`nodes API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let bob: RegisteredUser;
    const client = flowClient(() => svc);
    const { as, refusedWithoutEvents } = client;
    const newFlow = (user: Auth = alice) => client.newFlow(user);
    const addNode = (flowId: string, body?: unknown, user: Auth = alice) => client.addNode(user, flowId, body);
    const getFlow = (flowId: string, user: Auth = alice) => client.getFlow(user, flowId);

    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      alice = await registerUser(svc.baseUrl);
      bob = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    describe('POST /flows/{flowId}/nodes (the seed contract)', () => {
      it('201 {success: true, node: {id, type, position, data}, message} keeping every field sent', async () => {
        const flowId = await newFlow();
        const target = await addNode(flowId, transformNode(300));
        const body = fullNodeBody(target.id);
        const res = await as(alice, 'POST', `/flows/${flowId}/nodes`, body);
        expect(res.status, res.text).to.equal(201);
        expect(Object.keys(res.body).sort()).to.deep.equal(['message', 'node', 'success']);
        expect(res.body.success).to.equal(true);
        expect(res.body.message).to.be.a('string').and.not.equal('');
        const node = res.body.node;
        expect(Object.keys(node).sort()).to.deep.equal(['data', 'id', 'position', 'type']);
        expect(node.id).to.be.a('string').and.not.equal('');
        expect(node.type).to.equal(body.type);
        expect(node.position).to.deep.equal(body.position);
        // Every field as sent, except that header values are secrets: sealed when stored, masked in every read.
        const headers = { 'X-Team': '••••', Authorization: '••••' };
        expect(node.data).to.deep.equal({ ...body.data, webhookConfig: { ...body.data.webhookConfig, headers } });
        // And the flow holds exactly that node.
        const flow = await getFlow(flowId);
        expect(flow.nodes.find((n: { id: string }) => n.id === node.id)).to.deep.equal(node);
        expect(flow.version).to.equal(2);
        expect(res.headers.get('etag')).to.equal('"2"');
      });

      it('accepts the body a canvas sends by default (empty strings, empty lists and objects) and keeps it as sent', async () => {
        const flowId = await newFlow();
        const body = {
          type: 'custom',
          position: { x: 0, y: 0 },
          data: {
            agentName: '',
            llm: 'openai',
            model: 'gpt-4o',
            prompt: 'Hello',
            agentObjective: '',
            nodeType: 'llm',
            isAsync: false,
            startNode: false,
            url: '',
            conditions: [],
            webhookConfig: { url: '', method: 'POST', headers: {}, timeout: 30000 },
            variables: {},
          },
        };
        const res = await as(alice, 'POST', `/flows/${flowId}/nodes`, body);
        expect(res.status, res.text).to.equal(201);
        expect(res.body.node).to.deep.equal({ id: res.body.node.id, ...body });
      });

      it('takes a client-given id; 409 NODE_ID_TAKEN when it is used', async () => {
        const flowId = await newFlow();
        const node = await addNode(flowId, { id: 'node-1', ...transformNode() });
        expect(node.id).to.equal('node-1');
        await refusedWithoutEvents(() => as(alice, 'POST', `/flows/${flowId}/nodes`, { id: 'node-1', ...transformNode() }), 409, 'NODE_ID_TAKEN');
      });

      it('400 on a bad body, naming the field, with nothing saved', async () => {
        const flowId = await newFlow();
        const target = await addNode(flowId, transformNode());
        const path = `/flows/${flowId}/nodes`;
        const ok = fullNodeBody(target.id);
        const withData = (data: Record<string, unknown>) => ({ ...ok, data: { ...ok.data, ...data } });
        const cases: Array<[unknown, string]> = [
          [{ position: ok.position, data: ok.data }, 'body.type'],
          [{ type: 'custom', data: ok.data }, 'body.position'],
          [{ type: 'custom', position: { x: 'left', y: 0 }, data: ok.data }, 'body.position.x'],
          [{ type: 'custom', position: ok.position }, 'body.data'],
          [{ ...ok, colour: 'red' }, 'body.colour'],
          [withData({ nodeType: 'teleport' }), 'body.data.nodeType'],
          [withData({ prompt: '' }), 'body.data.prompt'],
          [withData({ llm: 'skynet' }), 'body.data.llm'],
          [withData({ model: 'gpt-17' }), 'body.data.model'],
          [withData({ conditions: [{ operator: 'resembles', value: 'x' }] }), 'body.data.conditions.0.operator'],
          [withData({ conditions: [{ operator: 'equals', value: 'x', targetNodeId: 'nowhere' }] }), 'body.data.conditions.0.targetNodeId'],
          [withData({ conditions: [{ operator: 'regex', value: '([' }] }), 'body.data.conditions.0.value'],
          [withData({ webhookConfig: { url: 'ftp://example.com/x' } }), 'body.data.webhookConfig.url'],
          [withData({ webhookConfig: { url: 'https://example.com', method: 'TELEPORT' } }), 'body.data.webhookConfig.method'],
          [withData({ webhookConfig: { url: 'https://example.com', timeout: -5 } }), 'body.data.webhookConfig.timeout'],
          [withData({ webhookConfig: { url: 'https://example.com', timeout: MAX_WEBHOOK_TIMEOUT_MS + 1 } }), 'body.data.webhookConfig.timeout'],
          [withData({ variables: { a: { b: { c: { d: { e: { f: 1 } } } } } } }), 'body.data.variables'],
          [withData({ isAsync: 'yes' }), 'body.data.isAsync'],
          [{ ...ok, id: '_hidden' }, 'body.id'],
        ];
        for (const [body, field] of cases) await refusedWithoutEvents(() => as(alice, 'POST', path, body), 400, 'VALIDATION_FAILED', field);
        await refusedWithoutEvents(() => call(svc.baseUrl, 'POST', path, '{"type": ', alice.auth), 400, 'INVALID_JSON');
        expect((await getFlow(flowId)).nodes).to.have.length(1);
      });

      it('401 without credentials, 404 for a missing flow or another user\'s, 412 for a stale If-Match', async () => {
        const flowId = await newFlow();
        const body = { type: 'custom', position: { x: 0, y: 0 }, data: llmData() };
        await refusedWithoutEvents(() => call(svc.baseUrl, 'POST', `/flows/${flowId}/nodes`, body), 401);
        await refusedWithoutEvents(() => as(alice, 'POST', '/flows/00000000-0000-0000-0000-000000000000/nodes', body), 404, 'FLOW_NOT_FOUND');
        await refusedWithoutEvents(() => as(bob, 'POST', `/flows/${flowId}/nodes`, body), 404, 'FLOW_NOT_FOUND');
        await addNode(flowId, body);
        await refusedWithoutEvents(() => as(alice, 'POST', `/flows/${flowId}/nodes`, body, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        expect((await as(alice, 'POST', `/flows/${flowId}/nodes`, body, { 'If-Match': '"1"' })).status).to.equal(201);
      });

      it('413 for a body over the body limit', async () => {
        const flowId = await newFlow();
        const big = { type: 'custom', position: { x: 0, y: 0 }, data: { ...llmData(), agentObjective: 'x'.repeat(svc.services.config.BODY_LIMIT_BYTES) } };
        await refusedWithoutEvents(() => as(alice, 'POST', `/flows/${flowId}/nodes`, big), 413, 'PAYLOAD_TOO_LARGE');
      });

      it('a storm of adds without If-Match (200 from 16 clients) is serialized: none refused, none lost', async () => {
        // Only a client's stale If-Match is a 409/412; two of our own requests meeting on one stream never are (issue 37).
        const flowId = await newFlow();
        const ADDS = 200;
        let next = 0;
        const statuses: number[] = [];
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (next < ADDS) {
              const i = next++;
              const res = await as(alice, 'POST', `/flows/${flowId}/nodes`, transformNode(i * 10));
              statuses.push(res.status);
              if (res.status !== 201) throw new Error(`add ${i} answered ${res.status}: ${res.text}`);
            }
          }),
        );
        expect(statuses).to.have.length(ADDS);
        const flow = await getFlow(flowId);
        expect(flow.nodes).to.have.length(ADDS);
        expect(flow.version).to.equal(ADDS);
      });
    });

    describe('GET /flows/{flowId}/nodes', () => {
      it('lists nodes in insertion order, paged', async () => {
        const flowId = await newFlow();
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await addNode(flowId, transformNode(i))).id);
        const all = await as(alice, 'GET', `/flows/${flowId}/nodes`);
        expect(all.status, all.text).to.equal(200);
        expect(all.body.items.map((n: { id: string }) => n.id)).to.deep.equal(ids);
        expect(all.body.nextCursor).to.equal(null);
        expect(all.headers.get('etag')).to.equal('"5"');
        const first = await as(alice, 'GET', `/flows/${flowId}/nodes?limit=2`);
        expect(first.body.items.map((n: { id: string }) => n.id)).to.deep.equal(ids.slice(0, 2));
        // The boundary survives removing the node it points after.
        await as(alice, 'DELETE', `/flows/${flowId}/nodes/${ids[1]}`);
        const second = await as(alice, 'GET', `/flows/${flowId}/nodes?limit=2&cursor=${first.body.nextCursor}`);
        expect(second.body.items.map((n: { id: string }) => n.id)).to.deep.equal(ids.slice(2, 4));
        // Both the boundary node and the one after it gone: resume where they stood.
        const again = await as(alice, 'GET', `/flows/${flowId}/nodes?limit=2`);
        expect(again.body.items.map((n: { id: string }) => n.id)).to.deep.equal([ids[0], ids[2]]);
        await as(alice, 'DELETE', `/flows/${flowId}/nodes/${ids[2]}`);
        await as(alice, 'DELETE', `/flows/${flowId}/nodes/${ids[3]}`);
        const rest = await as(alice, 'GET', `/flows/${flowId}/nodes?limit=2&cursor=${again.body.nextCursor}`);
        expect(rest.body.items.map((n: { id: string }) => n.id)).to.deep.equal([ids[4]]);
        expect(rest.body.nextCursor).to.equal(null);
      });

      it('400 on bad paging, 404 for a missing flow, 401 without credentials', async () => {
        const flowId = await newFlow();
        expectError(await as(alice, 'GET', `/flows/${flowId}/nodes?limit=0`), 400, 'VALIDATION_FAILED', 'query.limit');
        expectError(await as(alice, 'GET', `/flows/${flowId}/nodes?cursor=%%%`), 400);
        expectError(await as(alice, 'GET', `/flows/${flowId}/nodes?cursor=bm9wZQ`), 400, 'INVALID_CURSOR');
        expectError(await as(alice, 'GET', '/flows/no-such-flow/nodes'), 404, 'FLOW_NOT_FOUND');
        expectError(await call(svc.baseUrl, 'GET', `/flows/${flowId}/nodes`), 401);
      });
    });

    describe('PUT /flows/{flowId}/nodes/{nodeId}', () => {
      it('merges data key by key; type and position replace', async () => {
        const flowId = await newFlow();
        const node = await addNode(flowId, { type: 'custom', position: { x: 1, y: 1 }, data: { ...llmData(), agentName: 'A', variables: { k: 1 } } });
        const res = await as(alice, 'PUT', `/flows/${flowId}/nodes/${node.id}`, { id: node.id, position: { x: 5, y: 6 }, data: { prompt: 'new {{previous}}', agentName: null } });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.success).to.equal(true);
        expect(res.body.node).to.deep.equal({
          id: node.id,
          type: 'custom',
          position: { x: 5, y: 6 },
          data: { ...llmData('new {{previous}}'), agentName: null, variables: { k: 1 } },
        });
        expect((await getFlow(flowId)).nodes[0]).to.deep.equal(res.body.node);
        const retyped = await as(alice, 'PUT', `/flows/${flowId}/nodes/${node.id}`, { type: 'fancy' });
        expect(retyped.body.node.type).to.equal('fancy');
      });

      it('400 on bad data (per type too), 404 NODE_NOT_FOUND for unknown nodes and nodes of another flow, 412, 401', async () => {
        const flowId = await newFlow();
        const other = await newFlow();
        const node = await addNode(flowId);
        const foreign = await addNode(other);
        const path = `/flows/${flowId}/nodes/${node.id}`;
        await refusedWithoutEvents(() => as(alice, 'PUT', path, { data: { prompt: '' } }), 400, 'VALIDATION_FAILED', 'body.data.prompt');
        await refusedWithoutEvents(() => as(alice, 'PUT', path, { data: { conditions: [{ operator: 'nope' }] } }), 400, 'VALIDATION_FAILED', 'body.data.conditions.0.operator');
        await refusedWithoutEvents(() => as(alice, 'PUT', path, { position: { x: 1 } }), 400, 'VALIDATION_FAILED', 'body.position.y');
        await refusedWithoutEvents(() => as(alice, 'PUT', path, { id: 'someone-else', data: {} }), 400, 'VALIDATION_FAILED', 'body.id');
        await refusedWithoutEvents(() => as(alice, 'PUT', path, { nodes: [] }), 400, 'VALIDATION_FAILED', 'body.nodes');
        await refusedWithoutEvents(() => as(alice, 'PUT', `/flows/${flowId}/nodes/ghost`, { data: { prompt: 'x' } }), 404, 'NODE_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'PUT', `/flows/${flowId}/nodes/${foreign.id}`, { data: { prompt: 'x' } }), 404, 'NODE_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'PUT', `/flows/nope/nodes/${node.id}`, { data: { prompt: 'x' } }), 404, 'FLOW_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'PUT', path, { data: { prompt: 'x' } }, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await refusedWithoutEvents(() => call(svc.baseUrl, 'PUT', path, { data: { prompt: 'x' } }), 401);
      });
    });

    describe('DELETE /flows/{flowId}/nodes/{nodeId}', () => {
      it('removes the node, its connections and the conditions that targeted it, in one change', async () => {
        const flowId = await newFlow();
        const graph = {
          name: 'graph',
          nodes: [
            { id: 'a', type: 'custom', position: { x: 0, y: 0 }, data: { ...llmData(), conditions: [{ operator: 'contains', value: 'y', targetNodeId: 'b' }, { operator: 'is_empty', targetNodeId: 'c' }] } },
            { id: 'b', ...transformNode(1) },
            { id: 'c', ...transformNode(2) },
          ],
          edges: [
            { id: 'ab', source: 'a', target: 'b' },
            { id: 'ac', source: 'a', target: 'c' },
            { id: 'bc', source: 'b', target: 'c' },
          ],
        };
        expect((await as(alice, 'PUT', `/flows/${flowId}`, graph)).status).to.equal(200);
        const res = await as(alice, 'DELETE', `/flows/${flowId}/nodes/b`, undefined, { 'If-Match': '"1"' });
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.include({ success: true, nodeId: 'b', updatedNodeIds: ['a'] });
        expect(res.body.removedConnectionIds.sort()).to.deep.equal(['ab', 'bc']);
        expect(res.headers.get('etag')).to.equal('"2"');
        const flow = await getFlow(flowId);
        expect(flow.nodes.map((n: { id: string }) => n.id)).to.deep.equal(['a', 'c']);
        expect(flow.edges.map((e: { id: string }) => e.id)).to.deep.equal(['ac']);
        expect(flow.nodes[0].data.conditions).to.deep.equal([{ operator: 'is_empty', targetNodeId: 'c' }]);
        expect(flow.version).to.equal(2);
      });

      it('404 for an unknown node, a node of another flow or a missing flow; 412; 401', async () => {
        const flowId = await newFlow();
        const other = await newFlow();
        const node = await addNode(flowId);
        const foreign = await addNode(other);
        await refusedWithoutEvents(() => as(alice, 'DELETE', `/flows/${flowId}/nodes/ghost`), 404, 'NODE_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'DELETE', `/flows/${flowId}/nodes/${foreign.id}`), 404, 'NODE_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'DELETE', `/flows/no-flow/nodes/${node.id}`), 404, 'FLOW_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'DELETE', `/flows/${flowId}/nodes/${node.id}`, undefined, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await refusedWithoutEvents(() => call(svc.baseUrl, 'DELETE', `/flows/${flowId}/nodes/${node.id}`), 401);
        await refusedWithoutEvents(() => as(alice, 'DELETE', `/flows/${flowId}/nodes/bad%20id`), 400, 'VALIDATION_FAILED', 'params.nodeId');
      });
    });

    describe('POST /flows/{flowId}/nodes/{nodeId}/duplicate', () => {
      it('copies type and data under a new id at an offset, without connections', async () => {
        const flowId = await newFlow();
        const a = await addNode(flowId, { type: 'custom', position: { x: 10, y: 20 }, data: { ...llmData(), agentName: 'orig' } });
        const b = await addNode(flowId, transformNode());
        await as(alice, 'POST', `/flows/${flowId}/connections`, { source: a.id, target: b.id });
        const res = await as(alice, 'POST', `/flows/${flowId}/nodes/${a.id}/duplicate`);
        expect(res.status, res.text).to.equal(201);
        expect(res.body.success).to.equal(true);
        expect(res.body.node.id).to.not.equal(a.id);
        expect(res.body.node).to.deep.include({ type: a.type, position: { x: 50, y: 60 }, data: a.data });
        const custom = await as(alice, 'POST', `/flows/${flowId}/nodes/${a.id}/duplicate`, { id: 'copy-2', offset: { x: -10, y: 0 } });
        expect(custom.status, custom.text).to.equal(201);
        expect(custom.body.node).to.deep.include({ id: 'copy-2', position: { x: 0, y: 20 } });
        const flow = await getFlow(flowId);
        expect(flow.nodes).to.have.length(4);
        expect(flow.edges.filter((e: { source: string; target: string }) => e.source === res.body.node.id || e.target === res.body.node.id)).to.deep.equal([]);
      });

      it('409 for a used id, 400 for a bad body, 404 for unknown/foreign nodes and flows, 412, 401', async () => {
        const flowId = await newFlow();
        const other = await newFlow();
        const a = await addNode(flowId, { id: 'a', ...transformNode() });
        const foreign = await addNode(other);
        const path = `/flows/${flowId}/nodes/${a.id}/duplicate`;
        await refusedWithoutEvents(() => as(alice, 'POST', path, { id: 'a' }), 409, 'NODE_ID_TAKEN');
        await refusedWithoutEvents(() => as(alice, 'POST', path, { offset: { x: 'far' } }), 400, 'VALIDATION_FAILED', 'body.offset.x');
        await refusedWithoutEvents(() => as(alice, 'POST', path, { name: 'x' }), 400, 'VALIDATION_FAILED', 'body.name');
        await refusedWithoutEvents(() => as(alice, 'POST', `/flows/${flowId}/nodes/ghost/duplicate`), 404, 'NODE_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'POST', `/flows/${flowId}/nodes/${foreign.id}/duplicate`), 404, 'NODE_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'POST', `/flows/nope/nodes/${a.id}/duplicate`), 404, 'FLOW_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'POST', path, {}, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await refusedWithoutEvents(() => call(svc.baseUrl, 'POST', path, {}), 401);
      });
    });

    describe('POST /flows/{flowId}/nodes/validate', () => {
      it('answers valid for a good node and every problem for a bad one, saving nothing', async () => {
        const flowId = await newFlow();
        const target = await addNode(flowId, { id: 'target', ...transformNode() });
        const path = `/flows/${flowId}/nodes/validate`;
        const head = await svc.services.eventStore.headPosition();
        const good = await as(alice, 'POST', path, fullNodeBody(target.id));
        expect(good.status, good.text).to.equal(200);
        expect(good.body).to.deep.equal({ success: true, valid: true, problems: [] });
        const bad = await as(alice, 'POST', path, {
          id: 'target',
          type: 'custom',
          position: { x: 0 },
          data: { nodeType: 'llm', llm: 'openai', model: 'gpt-99', prompt: '', conditions: [{ operator: 'equals', value: 1, targetNodeId: 'ghost' }] },
          extra: true,
        });
        expect(bad.status, bad.text).to.equal(200);
        expect(bad.body.valid).to.equal(false);
        const fields = bad.body.problems.map((p: { field: string }) => p.field);
        for (const f of ['body.extra', 'body.id', 'body.position.y', 'body.data.model', 'body.data.prompt', 'body.data.conditions.0.targetNodeId']) expect(fields).to.include(f);
        expect(await svc.services.eventStore.headPosition()).to.equal(head);
        expect((await getFlow(flowId)).nodes).to.have.length(1);
      });

      it('400 for a body that is not an object, 404 for a missing or foreign flow, 401', async () => {
        const flowId = await newFlow();
        expectError(await as(alice, 'POST', `/flows/${flowId}/nodes/validate`, [1, 2]), 400, 'VALIDATION_FAILED');
        expectError(await as(alice, 'POST', '/flows/nope/nodes/validate', transformNode()), 404, 'FLOW_NOT_FOUND');
        expectError(await as(bob, 'POST', `/flows/${flowId}/nodes/validate`, transformNode()), 404, 'FLOW_NOT_FOUND');
        expectError(await call(svc.baseUrl, 'POST', `/flows/${flowId}/nodes/validate`, transformNode()), 401);
      });
    });

    describe('GET /node-types', () => {
      it('lists every node type with a description and the JSON Schema of its data', async () => {
        const res = await as(alice, 'GET', '/node-types');
        expect(res.status, res.text).to.equal(200);
        const types = res.body.nodeTypes.map((t: { nodeType: string }) => t.nodeType);
        for (const t of ['llm', 'webhook', 'transform', 'condition', 'input', 'output', 'delay']) expect(types).to.include(t);
        const llm = res.body.nodeTypes.find((t: { nodeType: string }) => t.nodeType === 'llm');
        expect(llm.description).to.be.a('string').and.not.equal('');
        expect(llm.dataSchema.type).to.equal('object');
        expect(llm.dataSchema.required).to.include.members(['llm', 'model', 'prompt']);
        expect(res.body.conditionOperators).to.include('regex');
        expect(res.body.limits.nodesPerFlow).to.equal(500);
      });

      it('401 without credentials', async () => {
        expectError(await call(svc.baseUrl, 'GET', '/node-types'), 401);
      });
    });

  });
}
