/**
 * Node history over real HTTP (list, delete one entry, clear a node, clear the flow), then
 * permissions (an API key limited to view_resources) and tenant isolation over every id-taking
 * node route. History entries are written the way runs will write them (RecordNodeExecution
 * through executeFlowCommand). Runs on every mode of availableModes().
 */
import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient, transformNode, type Auth } from './flows-support.js';

for (const mode of availableModes()) {
  describe(`node history, permissions and isolation API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let bob: RegisteredUser;
    const client = flowClient(() => svc);
    const { as, refusedWithoutEvents, recordRun } = client;
    const newFlow = (user: Auth = alice) => client.newFlow(user);
    const addNode = (flowId: string, body?: unknown, user: Auth = alice) => client.addNode(user, flowId, body);
    const getFlow = (flowId: string, user: Auth = alice) => client.getFlow(user, flowId);

    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      alice = await registerUser(svc.baseUrl);
      bob = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    describe('node history', () => {
      it('lists a node\'s entries newest first, paged; deletes one; clears a node; clears the flow', async () => {
        const flowId = await newFlow();
        const a = await addNode(flowId);
        const b = await addNode(flowId);
        for (let i = 1; i <= 5; i++) await recordRun(flowId, a.id, `a${i}`, { answer: i, nested: [[i]] });
        await recordRun(flowId, b.id, 'b1');
        const updatedAt = (await getFlow(flowId)).updatedAt;
        const first = await as(alice, 'GET', `/flows/${flowId}/nodes/${a.id}/history?limit=3`);
        expect(first.status, first.text).to.equal(200);
        expect(first.body.items.map((e: { entryId: string }) => e.entryId)).to.deep.equal(['a5', 'a4', 'a3']);
        expect(first.body.items[0]).to.deep.include({ processId: 'run-a5', status: 'completed', output: { answer: 5, nested: [[5]] }, outputTruncated: false, error: null, executionTime: 12 });
        expect(first.body.items[0].usage).to.deep.equal({ promptTokens: 3, completionTokens: 4, totalTokens: 7, cost: 0.0001 });
        const second = await as(alice, 'GET', `/flows/${flowId}/nodes/${a.id}/history?limit=3&cursor=${first.body.nextCursor}`);
        expect(second.body.items.map((e: { entryId: string }) => e.entryId)).to.deep.equal(['a2', 'a1']);
        expect(second.body.nextCursor).to.equal(null);

        const version = (await getFlow(flowId)).version;
        const del = await as(alice, 'DELETE', `/flows/${flowId}/nodes/${a.id}/history/a5`, undefined, { 'If-Match': `"${version}"` });
        expect(del.status, del.text).to.equal(200);
        expect(del.body.success).to.equal(true);
        expect(del.headers.get('etag')).to.equal(`"${version + 1}"`);
        const afterDelete = await as(alice, 'GET', `/flows/${flowId}/nodes/${a.id}/history`);
        expect(afterDelete.body.items.map((e: { entryId: string }) => e.entryId)).to.deep.equal(['a4', 'a3', 'a2', 'a1']);

        expect((await as(alice, 'DELETE', `/flows/${flowId}/nodes/${a.id}/history`)).status).to.equal(200);
        expect((await as(alice, 'GET', `/flows/${flowId}/nodes/${a.id}/history`)).body.items).to.deep.equal([]);
        expect((await as(alice, 'GET', `/flows/${flowId}/nodes/${b.id}/history`)).body.items).to.have.length(1);
        expect((await as(alice, 'DELETE', `/flows/${flowId}/history`)).status).to.equal(200);
        expect((await as(alice, 'GET', `/flows/${flowId}/nodes/${b.id}/history`)).body.items).to.deep.equal([]);
        // Clearing again is fine and changes nothing.
        const head = await svc.services.eventStore.headPosition();
        expect((await as(alice, 'DELETE', `/flows/${flowId}/history`)).status).to.equal(200);
        expect((await as(alice, 'DELETE', `/flows/${flowId}/nodes/${a.id}/history`)).status).to.equal(200);
        expect(await svc.services.eventStore.headPosition()).to.equal(head);
        // History is not an edit.
        expect((await getFlow(flowId)).updatedAt).to.equal(updatedAt);
      });

      it('404 for unknown entries, nodes, foreign nodes and flows; 400 on bad paging; 412; 401', async () => {
        const flowId = await newFlow();
        const other = await newFlow();
        const a = await addNode(flowId);
        const foreign = await addNode(other);
        await recordRun(flowId, a.id, 'e1');
        await recordRun(other, foreign.id, 'f1');
        const base = `/flows/${flowId}/nodes`;
        expectError(await as(alice, 'GET', `${base}/ghost/history`), 404, 'NODE_NOT_FOUND');
        expectError(await as(alice, 'GET', `${base}/${foreign.id}/history`), 404, 'NODE_NOT_FOUND');
        expectError(await as(alice, 'GET', `/flows/nope/nodes/${a.id}/history`), 404, 'FLOW_NOT_FOUND');
        expectError(await as(alice, 'GET', `${base}/${a.id}/history?limit=1000`), 400, 'VALIDATION_FAILED', 'query.limit');
        expectError(await as(alice, 'GET', `${base}/${a.id}/history?cursor=zzz`), 400, 'INVALID_CURSOR');
        await refusedWithoutEvents(() => as(alice, 'DELETE', `${base}/${a.id}/history/missing`), 404, 'HISTORY_ENTRY_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'DELETE', `${base}/${foreign.id}/history/f1`), 404, 'NODE_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'DELETE', `${base}/ghost/history`), 404, 'NODE_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'DELETE', '/flows/nope/history'), 404, 'FLOW_NOT_FOUND');
        await refusedWithoutEvents(() => as(alice, 'DELETE', `${base}/${a.id}/history/e1`, undefined, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await refusedWithoutEvents(() => as(alice, 'DELETE', `${base}/${a.id}/history`, undefined, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await refusedWithoutEvents(() => as(alice, 'DELETE', `/flows/${flowId}/history`, undefined, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        expectError(await call(svc.baseUrl, 'GET', `${base}/${a.id}/history`), 401);
        await refusedWithoutEvents(() => call(svc.baseUrl, 'DELETE', `${base}/${a.id}/history/e1`), 401);
        await refusedWithoutEvents(() => call(svc.baseUrl, 'DELETE', `${base}/${a.id}/history`), 401);
        await refusedWithoutEvents(() => call(svc.baseUrl, 'DELETE', `/flows/${flowId}/history`), 401);
        expect((await as(alice, 'GET', `${base}/${a.id}/history`)).body.items).to.have.length(1);
      });
    });

    describe('permissions and tenant isolation', () => {
      it('403 on every node write for an API key limited to view_resources; its reads and validate work', async () => {
        const flowId = await newFlow();
        const a = await addNode(flowId);
        await recordRun(flowId, a.id, 'e1');
        const created = await as(alice, 'POST', '/api-keys', { name: 'viewer', scopes: ['view_resources'] });
        expect(created.status, created.text).to.equal(201);
        const viewer = { auth: { Authorization: `Bearer ${created.body.key}` } };
        const base = `/flows/${flowId}/nodes`;
        expect((await as(viewer, 'GET', base)).status).to.equal(200);
        expect((await as(viewer, 'GET', `${base}/${a.id}/history`)).status).to.equal(200);
        expect((await as(viewer, 'POST', `${base}/validate`, transformNode())).status).to.equal(200);
        expect((await as(viewer, 'GET', '/node-types')).status).to.equal(200);
        const writes: Array<[string, string, unknown?]> = [
          ['POST', base, transformNode()],
          ['PUT', `${base}/${a.id}`, { position: { x: 1, y: 1 } }],
          ['DELETE', `${base}/${a.id}`],
          ['POST', `${base}/${a.id}/duplicate`, {}],
          ['DELETE', `${base}/${a.id}/history/e1`],
          ['DELETE', `${base}/${a.id}/history`],
          ['DELETE', `/flows/${flowId}/history`],
        ];
        for (const [method, path, body] of writes) await refusedWithoutEvents(() => as(viewer, method, path, body), 403, 'FORBIDDEN');
      });

      it('another user gets 404 on every id-taking node route, and nothing changes', async () => {
        const flowId = await newFlow();
        const a = await addNode(flowId);
        await recordRun(flowId, a.id, 'e1');
        const before = await getFlow(flowId);
        const base = `/flows/${flowId}/nodes`;
        const probes: Array<[string, string, unknown?]> = [
          ['GET', base],
          ['POST', base, transformNode()],
          ['POST', `${base}/validate`, transformNode()],
          ['PUT', `${base}/${a.id}`, { position: { x: 1, y: 1 } }],
          ['DELETE', `${base}/${a.id}`],
          ['POST', `${base}/${a.id}/duplicate`, {}],
          ['GET', `${base}/${a.id}/history`],
          ['DELETE', `${base}/${a.id}/history/e1`],
          ['DELETE', `${base}/${a.id}/history`],
          ['DELETE', `/flows/${flowId}/history`],
        ];
        const head = await svc.services.eventStore.headPosition();
        for (const [method, path, body] of probes) {
          expectError(await as(bob, method, path, body), 404, 'FLOW_NOT_FOUND');
          if (method !== 'GET' && !path.endsWith('/validate')) expectError(await as(bob, method, path, body, { 'If-Match': `"${before.version}"` }), 404, 'FLOW_NOT_FOUND');
        }
        expect(await svc.services.eventStore.headPosition()).to.equal(head);
        expect(await getFlow(flowId)).to.deep.equal(before);
        expect((await as(alice, 'GET', `${base}/${a.id}/history`)).body.items).to.have.length(1);
      });
    });
  });
}
