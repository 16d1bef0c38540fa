/**
 * Flows over real HTTP: list, create, get, replace, delete, archive, rename — each with its error
 * statuses — plus ETag / If-Match, permissions (an API key limited to view_resources, an
 * organization viewer) and tenant isolation. Runs on every mode of availableModes().
 */
import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient, llmData, type Res } from './flows-support.js';
import { addMember, createOrg } from './orgs-support.js';

const FLOW_KEYS = ['id', 'name', 'description', 'archived', 'version', 'createdAt', 'updatedAt', 'ownerId', 'orgId', 'workspaceId', 'nodes', 'edges', 'trigger'];

for (const mode of availableModes()) {
  describe(`flows API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let bob: RegisteredUser;
    const as = (user: { auth: Record<string, string> }, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      call(svc.baseUrl, method, path, body, { ...user.auth, ...headers });
    const createFlow = async (user: { auth: Record<string, string> }, name = `Flow ${Math.random().toString(36).slice(2, 8)}`, description?: string) => {
      const res = await as(user, 'POST', '/flows', description === undefined ? { name } : { name, description });
      expect(res.status, res.text).to.equal(201);
      return res.body.flow;
    };
    const { refusedWithoutEvents } = flowClient(() => svc);

    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      alice = await registerUser(svc.baseUrl);
      bob = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    describe('POST /flows', () => {
      it('creates an empty flow: 201 {success, flow} with every documented field and ETag', async () => {
        const res = await as(alice, 'POST', '/flows', { name: '  Onboarding  ', description: 'welcome mails' });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.success).to.equal(true);
        const flow = res.body.flow;
        expect(Object.keys(flow).sort()).to.deep.equal([...FLOW_KEYS].sort());
        expect(flow).to.include({ name: 'Onboarding', description: 'welcome mails', archived: false, version: 0, ownerId: alice.user.id, orgId: null, workspaceId: null });
        expect(flow.nodes).to.deep.equal([]);
        expect(flow.edges).to.deep.equal([]);
        expect(flow.createdAt).to.equal(flow.updatedAt);
        expect(res.headers.get('etag')).to.equal('"0"');
        const got = await as(alice, 'GET', `/flows/${flow.id}`);
        expect(got.body.flow).to.deep.equal(flow);
      });

      it('defaults the description to empty', async () => {
        expect((await createFlow(alice, 'No description')).description).to.equal('');
      });

      it('400 on a missing, blank, too long or non-string name, and on unknown fields', async () => {
        await refusedWithoutEvents(() => as(alice, 'POST', '/flows', {}), 400, 'VALIDATION_FAILED', 'body.name');
        await refusedWithoutEvents(() => as(alice, 'POST', '/flows', { name: '   ' }), 400, 'VALIDATION_FAILED', 'body.name');
        await refusedWithoutEvents(() => as(alice, 'POST', '/flows', { name: 'x'.repeat(201) }), 400, 'VALIDATION_FAILED', 'body.name');
        await refusedWithoutEvents(() => as(alice, 'POST', '/flows', { name: 7 }), 400, 'VALIDATION_FAILED', 'body.name');
        await refusedWithoutEvents(() => as(alice, 'POST', '/flows', { name: 'ok', description: 'd'.repeat(2001) }), 400, 'VALIDATION_FAILED', 'body.description');
        await refusedWithoutEvents(() => as(alice, 'POST', '/flows', { name: 'ok', nodes: [] }), 400, 'VALIDATION_FAILED', 'body.nodes');
        await refusedWithoutEvents(() => call(svc.baseUrl, 'POST', '/flows', '{"name": ', alice.auth), 400, 'INVALID_JSON');
      });

      it('401 without or with a bad credential', async () => {
        await refusedWithoutEvents(() => call(svc.baseUrl, 'POST', '/flows', { name: 'x' }), 401);
        await refusedWithoutEvents(() => call(svc.baseUrl, 'POST', '/flows', { name: 'x' }, { Authorization: 'Bearer nope' }), 401);
      });
    });

    describe('GET /flows', () => {
      let user: RegisteredUser;
      let ids: string[];
      before(async () => {
        user = await registerUser(svc.baseUrl);
        ids = [];
        for (let i = 0; i < 5; i++) ids.push((await createFlow(user, `list ${i}`)).id);
      });

      it('lists newest-updated first, without graphs; an edit moves a flow to the front', async () => {
        const res = await as(user, 'GET', '/flows');
        expect(res.status, res.text).to.equal(200);
        expect(res.body.success).to.equal(true);
        expect(res.body.items.map((f: { id: string }) => f.id)).to.deep.equal([...ids].reverse());
        expect(res.body.nextCursor).to.equal(null);
        expect(res.body.items[0]).to.include({ nodeCount: 0, edgeCount: 0, ownerId: user.user.id });
        expect(res.body.items[0]).to.not.have.property('nodes');
        await as(user, 'PATCH', `/flows/${ids[0]}/name`, { name: 'touched' });
        const after = await as(user, 'GET', '/flows');
        expect(after.body.items[0].id).to.equal(ids[0]);
        expect(after.body.items[0].name).to.equal('touched');
      });

      it('pages with limit and cursor, without repeats or gaps', async () => {
        const all = (await as(user, 'GET', '/flows?limit=100')).body.items.map((f: { id: string }) => f.id);
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const res: Res = await as(user, 'GET', `/flows?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
          expect(res.status, res.text).to.equal(200);
          expect(res.body.items.length).to.be.at.most(2);
          seen.push(...res.body.items.map((f: { id: string }) => f.id));
          cursor = res.body.nextCursor;
        } while (cursor);
        expect(seen).to.deep.equal(all);
        expect(seen).to.have.length(5);
      });

      it('filters archived=true|false', async () => {
        await as(user, 'PATCH', `/flows/${ids[2]}/archive`, { archived: true });
        const archived = await as(user, 'GET', '/flows?archived=true');
        expect(archived.body.items.map((f: { id: string }) => f.id)).to.deep.equal([ids[2]]);
        const active = await as(user, 'GET', '/flows?archived=false');
        expect(active.body.items.map((f: { id: string }) => f.id)).to.not.include(ids[2]);
        expect(active.body.items).to.have.length(4);
      });

      it('400 on bad limit, archived, cursor or unknown parameters; 401 without credentials', async () => {
        expectError(await as(user, 'GET', '/flows?limit=0'), 400, 'VALIDATION_FAILED', 'query.limit');
        expectError(await as(user, 'GET', '/flows?limit=101'), 400, 'VALIDATION_FAILED', 'query.limit');
        expectError(await as(user, 'GET', '/flows?archived=maybe'), 400, 'VALIDATION_FAILED', 'query.archived');
        expectError(await as(user, 'GET', '/flows?colour=red'), 400, 'VALIDATION_FAILED', 'query.colour');
        expectError(await as(user, 'GET', '/flows?cursor=garbage'), 400, 'INVALID_CURSOR');
        expectError(await call(svc.baseUrl, 'GET', '/flows'), 401);
      });
    });

    describe('GET /flows/{flowId}', () => {
      it('answers the flow with ETag, and 304 to If-None-Match of the current version', async () => {
        const flow = await createFlow(alice);
        const res = await as(alice, 'GET', `/flows/${flow.id}`);
        expect(res.status).to.equal(200);
        expect(res.headers.get('etag')).to.equal(`"${flow.version}"`);
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(res.body).to.deep.equal({ success: true, flow });
        expect((await as(alice, 'GET', `/flows/${flow.id}`, undefined, { 'If-None-Match': `"${flow.version}"` })).status).to.equal(304);
        expect((await as(alice, 'GET', `/flows/${flow.id}`, undefined, { 'If-None-Match': '"999"' })).status).to.equal(200);
      });

      it('404 FLOW_NOT_FOUND for an unknown id, 400 for a malformed one, 401 without credentials', async () => {
        expectError(await as(alice, 'GET', '/flows/00000000-0000-0000-0000-000000000000'), 404, 'FLOW_NOT_FOUND');
        expectError(await as(alice, 'GET', '/flows/bad%20id!'), 400, 'VALIDATION_FAILED', 'params.flowId');
        const flow = await createFlow(alice);
        expectError(await call(svc.baseUrl, 'GET', `/flows/${flow.id}`), 401);
      });
    });

    describe('PUT /flows/{flowId}', () => {
      const graph = () => ({
        name: 'Replaced',
        description: 'two nodes',
        nodes: [
          { id: 'a', type: 'custom', position: { x: 0, y: 0 }, data: { ...llmData(), startNode: true, conditions: [{ operator: 'contains', value: 'yes', targetNodeId: 'b' }] } },
          { id: 'b', type: 'custom', position: { x: 200, y: 0 }, data: { nodeType: 'transform', template: '{{previous}}' } },
        ],
        edges: [{ id: 'e1', source: 'a', target: 'b', label: 'when yes' }],
      });

      it('replaces name, description, nodes and edges; the GET shows exactly that', async () => {
        const flow = await createFlow(alice);
        const res = await as(alice, 'PUT', `/flows/${flow.id}`, graph(), { 'If-Match': '"0"' });
        expect(res.status, res.text).to.equal(200);
        expect(res.headers.get('etag')).to.equal('"1"');
        expect(res.body.flow).to.include({ name: 'Replaced', description: 'two nodes', version: 1 });
        expect(res.body.flow.nodes).to.deep.equal(graph().nodes);
        expect(res.body.flow.edges).to.deep.equal(graph().edges);
        expect((await as(alice, 'GET', `/flows/${flow.id}`)).body.flow).to.deep.equal(res.body.flow);
      });

      it('400 on a bad body (missing nodes, bad node, dangling edge, cycle), each naming the problem', async () => {
        const flow = await createFlow(alice);
        const path = `/flows/${flow.id}`;
        await refusedWithoutEvents(() => as(alice, 'PUT', path, { name: 'x', edges: [] }), 400, 'VALIDATION_FAILED', 'body.nodes');
        const badPrompt = graph();
        badPrompt.nodes[0] = { ...badPrompt.nodes[0], data: { ...llmData(''), startNode: true, conditions: [] } };
        await refusedWithoutEvents(() => as(alice, 'PUT', path, badPrompt), 400, 'VALIDATION_FAILED', 'body.nodes.0.data.prompt');
        const dangling = { ...graph(), edges: [{ id: 'e1', source: 'a', target: 'zzz' }] };
        await refusedWithoutEvents(() => as(alice, 'PUT', path, dangling), 400, 'DANGLING_EDGE');
        const cycle = { ...graph(), edges: [...graph().edges, { id: 'e2', source: 'b', target: 'a' }] };
        await refusedWithoutEvents(() => as(alice, 'PUT', path, cycle), 400, 'CYCLE');
      });

      it('404 for an unknown flow, 412 for a stale If-Match, 400 for a malformed one, 401 without credentials', async () => {
        const flow = await createFlow(alice);
        expectError(await as(alice, 'PUT', '/flows/00000000-0000-0000-0000-000000000000', graph()), 404, 'FLOW_NOT_FOUND');
        await as(alice, 'PATCH', `/flows/${flow.id}/name`, { name: 'moved on' });
        await refusedWithoutEvents(() => as(alice, 'PUT', `/flows/${flow.id}`, graph(), { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await refusedWithoutEvents(() => as(alice, 'PUT', `/flows/${flow.id}`, graph(), { 'If-Match': 'yesterday' }), 400, 'VALIDATION_FAILED', 'headers.if-match');
        await refusedWithoutEvents(() => call(svc.baseUrl, 'PUT', `/flows/${flow.id}`, graph()), 401);
        expect((await as(alice, 'PUT', `/flows/${flow.id}`, graph(), { 'If-Match': '"1"' })).status).to.equal(200);
      });
    });

    describe('DELETE /flows/{flowId}', () => {
      it('deletes: later GETs, writes and lists answer as if it never existed', async () => {
        const flow = await createFlow(alice);
        const res = await as(alice, 'DELETE', `/flows/${flow.id}`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.include({ success: true, id: flow.id });
        expectError(await as(alice, 'GET', `/flows/${flow.id}`), 404, 'FLOW_NOT_FOUND');
        expectError(await as(alice, 'DELETE', `/flows/${flow.id}`), 404, 'FLOW_NOT_FOUND');
        expectError(await as(alice, 'PATCH', `/flows/${flow.id}/name`, { name: 'zombie' }), 404, 'FLOW_NOT_FOUND');
        const list = await as(alice, 'GET', '/flows?limit=100');
        expect(list.body.items.map((f: { id: string }) => f.id)).to.not.include(flow.id);
      });

      it('412 for a stale If-Match, 401 without credentials', async () => {
        const flow = await createFlow(alice);
        await as(alice, 'PATCH', `/flows/${flow.id}/archive`, { archived: true });
        await refusedWithoutEvents(() => as(alice, 'DELETE', `/flows/${flow.id}`, undefined, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await refusedWithoutEvents(() => call(svc.baseUrl, 'DELETE', `/flows/${flow.id}`), 401);
        expect((await as(alice, 'DELETE', `/flows/${flow.id}`, undefined, { 'If-Match': '"1"' })).status).to.equal(200);
      });
    });

    describe('PATCH /flows/{flowId}/archive and /name', () => {
      it('archives and unarchives; repeating is no new version', async () => {
        const flow = await createFlow(alice);
        const archived = await as(alice, 'PATCH', `/flows/${flow.id}/archive`, { archived: true });
        expect(archived.status, archived.text).to.equal(200);
        expect(archived.body.flow).to.include({ archived: true, version: 1 });
        expect(archived.body.flow.updatedAt >= flow.updatedAt).to.equal(true);
        const again = await as(alice, 'PATCH', `/flows/${flow.id}/archive`, { archived: true });
        expect(again.body.flow).to.include({ archived: true, version: 1 });
        const back = await as(alice, 'PATCH', `/flows/${flow.id}/archive`, { archived: false });
        expect(back.body.flow).to.include({ archived: false, version: 2 });
        expect(back.headers.get('etag')).to.equal('"2"');
      });

      it('renames; the name is trimmed', async () => {
        const flow = await createFlow(alice);
        const res = await as(alice, 'PATCH', `/flows/${flow.id}/name`, { name: '  New name ' }, { 'If-Match': `"${flow.version}"` });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.flow).to.include({ name: 'New name', version: 1 });
        expect((await as(alice, 'GET', `/flows/${flow.id}`)).body.flow.name).to.equal('New name');
      });

      it('400 on bad bodies, 404 for unknown flows, 412 for stale versions, 401 without credentials', async () => {
        const flow = await createFlow(alice);
        const archive = `/flows/${flow.id}/archive`;
        const name = `/flows/${flow.id}/name`;
        await refusedWithoutEvents(() => as(alice, 'PATCH', archive, { archived: 'yes' }), 400, 'VALIDATION_FAILED', 'body.archived');
        await refusedWithoutEvents(() => as(alice, 'PATCH', archive, {}), 400, 'VALIDATION_FAILED', 'body.archived');
        await refusedWithoutEvents(() => as(alice, 'PATCH', name, { name: '' }), 400, 'VALIDATION_FAILED', 'body.name');
        await refusedWithoutEvents(() => as(alice, 'PATCH', name, { name: 'ok', extra: 1 }), 400, 'VALIDATION_FAILED', 'body.extra');
        expectError(await as(alice, 'PATCH', '/flows/no-such-flow/archive', { archived: true }), 404, 'FLOW_NOT_FOUND');
        expectError(await as(alice, 'PATCH', '/flows/no-such-flow/name', { name: 'x' }), 404, 'FLOW_NOT_FOUND');
        await as(alice, 'PATCH', name, { name: 'v1' });
        await refusedWithoutEvents(() => as(alice, 'PATCH', archive, { archived: true }, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await refusedWithoutEvents(() => as(alice, 'PATCH', name, { name: 'v2' }, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await refusedWithoutEvents(() => call(svc.baseUrl, 'PATCH', archive, { archived: true }), 401);
        await refusedWithoutEvents(() => call(svc.baseUrl, 'PATCH', name, { name: 'v3' }), 401);
      });
    });

    describe('permissions', () => {
      it('403 on every write for an API key limited to view_resources; reads work', async () => {
        const flow = await createFlow(alice);
        const created = await as(alice, 'POST', '/api-keys', { name: 'read only', scopes: ['view_resources'] });
        expect(created.status, created.text).to.equal(201);
        const viewer = { auth: { Authorization: `Bearer ${created.body.key}` } };
        expect((await as(viewer, 'GET', '/flows')).status).to.equal(200);
        expect((await as(viewer, 'GET', `/flows/${flow.id}`)).status).to.equal(200);
        const p = `/flows/${flow.id}`;
        await refusedWithoutEvents(() => as(viewer, 'POST', '/flows', { name: 'x' }), 403, 'FORBIDDEN');
        await refusedWithoutEvents(() => as(viewer, 'PUT', p, { name: 'x', nodes: [], edges: [] }), 403, 'FORBIDDEN');
        await refusedWithoutEvents(() => as(viewer, 'DELETE', p), 403, 'FORBIDDEN');
        await refusedWithoutEvents(() => as(viewer, 'PATCH', `${p}/archive`, { archived: true }), 403, 'FORBIDDEN');
        await refusedWithoutEvents(() => as(viewer, 'PATCH', `${p}/name`, { name: 'x' }), 403, 'FORBIDDEN');
      });

      it('in an organization: members of the workspace share its flows; a viewer reads but gets 403 on writes', async () => {
        const owner = await registerUser(svc.baseUrl);
        const { org } = await createOrg(svc, owner);
        const editor = await addMember(svc, owner, org.id, 'editor');
        const viewer = await addMember(svc, owner, org.id, 'viewer');
        const inOrg = async (user: RegisteredUser) => {
          const res = await as(user, 'POST', '/orgs/switch', { orgId: org.id });
          expect(res.status, res.text).to.equal(200);
          return { auth: { Authorization: `Bearer ${res.body.token}` } };
        };
        const [ownerOrg, editorOrg, viewerOrg] = [await inOrg(owner), await inOrg(editor), await inOrg(viewer)];
        const personal = await createFlow(owner, 'personal');
        const shared = await createFlow(ownerOrg, 'shared');
        expect(shared.orgId).to.equal(org.id);
        expect(shared.workspaceId).to.be.a('string');

        // The org flow is the workspace's; the personal one stays out of the org, and the other way round.
        expect((await as(viewerOrg, 'GET', `/flows/${shared.id}`)).status).to.equal(200);
        expect((await as(viewerOrg, 'GET', '/flows')).body.items.map((f: { id: string }) => f.id)).to.deep.equal([shared.id]);
        expectError(await as(ownerOrg, 'GET', `/flows/${personal.id}`), 404, 'FLOW_NOT_FOUND');
        expectError(await as(owner, 'GET', `/flows/${shared.id}`), 404, 'FLOW_NOT_FOUND');

        const renamed = await as(editorOrg, 'PATCH', `/flows/${shared.id}/name`, { name: 'edited by the editor' });
        expect(renamed.status, renamed.text).to.equal(200);
        await refusedWithoutEvents(() => as(viewerOrg, 'PATCH', `/flows/${shared.id}/name`, { name: 'nope' }), 403, 'FORBIDDEN');
        await refusedWithoutEvents(() => as(viewerOrg, 'POST', '/flows', { name: 'nope' }), 403, 'FORBIDDEN');
        await refusedWithoutEvents(() => as(viewerOrg, 'DELETE', `/flows/${shared.id}`), 403, 'FORBIDDEN');
      });
    });

    describe('tenant isolation', () => {
      it("another user gets 404 on every id-taking flow route, also with an If-Match, and never sees the flow in a list", async () => {
        const flow = await createFlow(alice, 'private');
        const p = `/flows/${flow.id}`;
        const probes: Array<[string, string, unknown?]> = [
          ['GET', p],
          ['PUT', p, { name: 'x', nodes: [], edges: [] }],
          ['DELETE', p],
          ['PATCH', `${p}/archive`, { archived: true }],
          ['PATCH', `${p}/name`, { name: 'stolen' }],
        ];
        const head = await svc.services.eventStore.headPosition();
        for (const [method, path, body] of probes) {
          expectError(await as(bob, method, path, body), 404, 'FLOW_NOT_FOUND');
          if (method !== 'GET') expectError(await as(bob, method, path, body, { 'If-Match': '"7"' }), 404, 'FLOW_NOT_FOUND');
        }
        expect(await svc.services.eventStore.headPosition()).to.equal(head);
        expect((await as(bob, 'GET', '/flows?limit=100')).body.items.map((f: { id: string }) => f.id)).to.not.include(flow.id);
        const still = await as(alice, 'GET', p);
        expect(still.body.flow).to.include({ name: 'private', archived: false, version: 0 });
      });
    });
  });
}
