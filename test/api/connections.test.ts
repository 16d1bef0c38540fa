import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { flowStreamId } from '../../domain/flows/index.js';
import { call } from '../support/http.js';
import { registerUser, viewOnlyKey, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, fields } from './orgs-support.js';

const transform = { nodeType: 'transform', template: '{{previous}}' };

for (const mode of availableModes()) {
  describe(`Connections (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    let viewOnly: Record<string, string>;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
      viewOnly = await viewOnlyKey(svc.baseUrl, owner);
    });
    after(async () => svc?.stop());

    const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = owner.auth) => call(svc.baseUrl, method, path, body, headers);

    async function createFlow(user = owner): Promise<string> {
      const res = await api('POST', '/flows', { name: `Flow ${randomUUID().slice(0, 8)}` }, user.auth);
      expect(res.status, res.text).to.equal(201);
      return res.body.flow.id;
    }
    async function addNode(flowId: string, data: Record<string, unknown> = transform, user = owner): Promise<string> {
      const res = await api('POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x: 0, y: 0 }, data }, user.auth);
      expect(res.status, res.text).to.equal(201);
      return res.body.node.id;
    }
    /** A flow with `count` unconnected transform nodes. */
    async function flowWithNodes(count: number) {
      const flowId = await createFlow();
      const nodes: string[] = [];
      for (let i = 0; i < count; i++) nodes.push(await addNode(flowId));
      return { flowId, nodes };
    }
    async function connect(flowId: string, source: string, target: string, extra: Record<string, unknown> = {}) {
      const res = await api('POST', `/flows/${flowId}/connections`, { source, target, ...extra });
      expect(res.status, res.text).to.equal(201);
      return res.body.connection as { id: string; source: string; target: string; label?: string | null };
    }
    /** The stream revision straight from the log: proves a refusal appended nothing. */
    async function revisionOf(flowId: string): Promise<number> {
      const [last] = await svc.services.eventStore.readStream(flowStreamId(flowId), { direction: 'backwards', maxCount: 1 });
      return last?.revision ?? -1;
    }
    async function expectNothingAppended(flowId: string, send: () => Promise<{ status: number; body: any; text: string }>, status: number, code?: string) {
      const before = await revisionOf(flowId);
      const res = await send();
      expectError(res, status, code);
      expect(await revisionOf(flowId), 'nothing appended').to.equal(before);
      return res;
    }
    const edgesOf = async (flowId: string) => (await api('GET', `/flows/${flowId}/connections?limit=100`)).body.items as Array<{ id: string; source: string; target: string }>;

    describe('create', () => {
      it('connects two nodes: 201 with the connection, its new version as ETag, and lists it at once', async () => {
        const { flowId, nodes } = await flowWithNodes(2);
        const before = await revisionOf(flowId);
        const res = await api('POST', `/flows/${flowId}/connections`, { source: nodes[0], target: nodes[1], sourceHandle: 'out', label: 'next', data: { weight: 2 } });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.success).to.equal(true);
        expect(res.body.connection).to.deep.include({ source: nodes[0], target: nodes[1], sourceHandle: 'out', label: 'next', data: { weight: 2 } });
        expect(res.body.connection.id).to.be.a('string');
        expect(res.headers.get('etag')).to.equal(`"${before + 1}"`);
        expect(await edgesOf(flowId)).to.deep.equal([res.body.connection]);
      });

      it('400 on a bad body, naming the field; nothing appended', async () => {
        const { flowId, nodes } = await flowWithNodes(2);
        const missing = await expectNothingAppended(flowId, () => api('POST', `/flows/${flowId}/connections`, { source: nodes[0] }), 400, 'VALIDATION_FAILED');
        expect(fields(missing)).to.include('body.target');
        const unknown = await expectNothingAppended(flowId, () => api('POST', `/flows/${flowId}/connections`, { source: nodes[0], target: nodes[1], colour: 'red' }), 400, 'VALIDATION_FAILED');
        expect(fields(unknown)).to.include('body.colour');
        const badParam = await api('POST', '/flows/not%20an%20id/connections', { source: nodes[0], target: nodes[1] });
        expectError(badParam, 400, 'VALIDATION_FAILED');
        expect(fields(badParam)).to.include('params.flowId');
      });

      it('refuses each structural problem with its own code (400); nothing appended', async () => {
        const { flowId, nodes } = await flowWithNodes(3);
        const [a, b, c] = nodes;
        await connect(flowId, a, b);
        await connect(flowId, b, c);
        const post = (body: object) => () => api('POST', `/flows/${flowId}/connections`, body);
        await expectNothingAppended(flowId, post({ source: a, target: a }), 400, 'SELF_LOOP');
        await expectNothingAppended(flowId, post({ source: a, target: b }), 400, 'DUPLICATE_EDGE');
        await expectNothingAppended(flowId, post({ source: a, target: 'no-such-node' }), 400, 'DANGLING_EDGE');
        const cycle = await expectNothingAppended(flowId, post({ source: c, target: a }), 400, 'CYCLE');
        expect(cycle.body.error.details.problems[0].nodeIds).to.have.members([a, b, c]);
        // Another handle pair is another connection, not a duplicate.
        await connect(flowId, a, b, { sourceHandle: 'else' });
      });

      it('401 without credentials, 403 with a view-only key, 404 for an unknown flow', async () => {
        const { flowId, nodes } = await flowWithNodes(2);
        const body = { source: nodes[0], target: nodes[1] };
        await expectNothingAppended(flowId, () => api('POST', `/flows/${flowId}/connections`, body, {}), 401);
        await expectNothingAppended(flowId, () => api('POST', `/flows/${flowId}/connections`, body, viewOnly), 403, 'FORBIDDEN');
        expectError(await api('POST', `/flows/${randomUUID()}/connections`, body), 404, 'FLOW_NOT_FOUND');
      });

      it('412 with a stale If-Match, 400 with a malformed one; the current one is accepted', async () => {
        const { flowId, nodes } = await flowWithNodes(3);
        const version = await revisionOf(flowId);
        const body = { source: nodes[0], target: nodes[1] };
        await expectNothingAppended(flowId, () => api('POST', `/flows/${flowId}/connections`, body, { ...owner.auth, 'If-Match': `"${version - 1}"` }), 412, 'PRECONDITION_FAILED');
        const bad = await expectNothingAppended(flowId, () => api('POST', `/flows/${flowId}/connections`, body, { ...owner.auth, 'If-Match': 'yesterday' }), 400, 'VALIDATION_FAILED');
        expect(fields(bad)).to.deep.equal(['headers.if-match']);
        const ok = await api('POST', `/flows/${flowId}/connections`, body, { ...owner.auth, 'If-Match': `"${version}"` });
        expect(ok.status, ok.text).to.equal(201);
        expect(ok.headers.get('etag')).to.equal(`"${version + 1}"`);
      });
    });

    describe('list', () => {
      it('pages through the connections in the order they were added', async () => {
        const { flowId, nodes } = await flowWithNodes(4);
        const made = [await connect(flowId, nodes[0], nodes[1]), await connect(flowId, nodes[1], nodes[2]), await connect(flowId, nodes[2], nodes[3])];
        const first = await api('GET', `/flows/${flowId}/connections?limit=2`);
        expect(first.status, first.text).to.equal(200);
        expect(first.body.items.map((e: { id: string }) => e.id)).to.deep.equal([made[0].id, made[1].id]);
        expect(first.headers.get('etag')).to.equal(`"${await revisionOf(flowId)}"`);
        // A removal before the page boundary does not make the next page skip anything.
        await api('DELETE', `/flows/${flowId}/connections/${made[0].id}`);
        const second = await api('GET', `/flows/${flowId}/connections?limit=2&cursor=${first.body.nextCursor}`);
        expect(second.body.items.map((e: { id: string }) => e.id)).to.deep.equal([made[2].id]);
        expect(second.body.nextCursor).to.equal(null);
      });

      it('is allowed with view_resources; 400 on a bad limit or cursor, 401, 404', async () => {
        const { flowId, nodes } = await flowWithNodes(2);
        await connect(flowId, nodes[0], nodes[1]);
        expect((await api('GET', `/flows/${flowId}/connections`, undefined, viewOnly)).body.items).to.have.length(1);
        expect(fields(await api('GET', `/flows/${flowId}/connections?limit=0`))).to.include('query.limit');
        expectError(await api('GET', `/flows/${flowId}/connections?cursor=garbage`), 400, 'INVALID_CURSOR');
        expectError(await api('GET', `/flows/${flowId}/connections`, undefined, {}), 401);
        expectError(await api('GET', `/flows/${randomUUID()}/connections`), 404, 'FLOW_NOT_FOUND');
      });
    });

    describe('update', () => {
      it('replaces the given fields; null clears a label; an unchanged update appends nothing', async () => {
        const { flowId, nodes } = await flowWithNodes(3);
        const edge = await connect(flowId, nodes[0], nodes[1], { label: 'first' });
        const moved = await api('PUT', `/flows/${flowId}/connections/${edge.id}`, { target: nodes[2], label: null });
        expect(moved.status, moved.text).to.equal(200);
        expect(moved.body.connection).to.deep.include({ id: edge.id, source: nodes[0], target: nodes[2], label: null });
        expect((await edgesOf(flowId))[0]).to.deep.equal(moved.body.connection);
        const version = await revisionOf(flowId);
        const same = await api('PUT', `/flows/${flowId}/connections/${edge.id}`, { target: nodes[2] });
        expect(same.status).to.equal(200);
        expect(await revisionOf(flowId)).to.equal(version);
      });

      it('refuses a move that makes a cycle or a self-loop, a bad body, an unknown connection; 401, 403, 404, 412', async () => {
        const { flowId, nodes } = await flowWithNodes(3);
        const ab = await connect(flowId, nodes[0], nodes[1]);
        const bc = await connect(flowId, nodes[1], nodes[2]);
        const put = (id: string, body: unknown, headers: Record<string, string> = owner.auth) => () => api('PUT', `/flows/${flowId}/connections/${id}`, body, headers);
        await expectNothingAppended(flowId, put(bc.id, { target: nodes[0] }), 400, 'CYCLE');
        await expectNothingAppended(flowId, put(ab.id, { target: nodes[0] }), 400, 'SELF_LOOP');
        await expectNothingAppended(flowId, put(ab.id, {}), 400, 'VALIDATION_FAILED');
        expect(fields(await api('PUT', `/flows/${flowId}/connections/${ab.id}`, { label: 7 }))).to.include('body.label');
        expect(fields(await api('PUT', `/flows/${flowId}/connections/bad$id`, { label: 'x' }))).to.include('params.connectionId');
        await expectNothingAppended(flowId, put('no-such-edge', { label: 'x' }), 404, 'CONNECTION_NOT_FOUND');
        await expectNothingAppended(flowId, put(ab.id, { label: 'x' }, {}), 401);
        await expectNothingAppended(flowId, put(ab.id, { label: 'x' }, viewOnly), 403, 'FORBIDDEN');
        expectError(await api('PUT', `/flows/${randomUUID()}/connections/${ab.id}`, { label: 'x' }), 404, 'FLOW_NOT_FOUND');
        await expectNothingAppended(flowId, put(ab.id, { label: 'x' }, { ...owner.auth, 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
      });
    });

    describe('delete', () => {
      it('deletes a connection; deleting it again is 404; 401, 403, 404, 412', async () => {
        const { flowId, nodes } = await flowWithNodes(2);
        const edge = await connect(flowId, nodes[0], nodes[1]);
        const del = (headers: Record<string, string> = owner.auth, id = edge.id) => () => api('DELETE', `/flows/${flowId}/connections/${id}`, undefined, headers);
        await expectNothingAppended(flowId, del({}), 401);
        await expectNothingAppended(flowId, del(viewOnly), 403, 'FORBIDDEN');
        await expectNothingAppended(flowId, del({ ...owner.auth, 'If-Match': '"1"' }), 412, 'PRECONDITION_FAILED');
        expectError(await api('DELETE', `/flows/${randomUUID()}/connections/${edge.id}`), 404, 'FLOW_NOT_FOUND');
        const res = await del()();
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.include({ success: true, connectionId: edge.id });
        expect(await edgesOf(flowId)).to.deep.equal([]);
        await expectNothingAppended(flowId, del(), 404, 'CONNECTION_NOT_FOUND');
      });
    });

    describe('validate', () => {
      it('answers valid for a sound graph, with view_resources', async () => {
        const { flowId, nodes } = await flowWithNodes(2);
        await connect(flowId, nodes[0], nodes[1]);
        const res = await api('POST', `/flows/${flowId}/connections/validate`, undefined, viewOnly);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.include({ success: true, valid: true, problems: [] });
      });

      it('reports every problem of the stored graph, each with its code', async () => {
        const flowId = await createFlow();
        const start = await addNode(flowId, { ...transform, startNode: true });
        const target = await addNode(flowId);
        const lonely = await addNode(flowId);
        const branch = await addNode(flowId, { nodeType: 'condition', conditions: [{ targetNodeId: target, operator: 'equals', value: 'yes' }] });
        await connect(flowId, start, branch);
        const res = await api('POST', `/flows/${flowId}/connections/validate`, {});
        expect(res.status, res.text).to.equal(200);
        expect(res.body.valid).to.equal(false);
        const byCode = (code: string) => res.body.problems.filter((p: { code: string }) => p.code === code);
        expect(byCode('UNREACHABLE_NODE').flatMap((p: { nodeIds: string[] }) => p.nodeIds)).to.have.members([target, lonely]);
        expect(byCode('CONDITION_TARGET_WITHOUT_EDGE')).to.have.length(1);
        expect(byCode('CONDITION_TARGET_WITHOUT_EDGE')[0].nodeIds).to.deep.equal([branch, target]);
        for (const p of res.body.problems) expect(p.message).to.be.a('string').and.not.equal('');
      });

      it('reports the problems proposed connections would bring, every one, without saving anything', async () => {
        const { flowId, nodes } = await flowWithNodes(3);
        const [a, b, c] = nodes;
        const ab = await connect(flowId, a, b);
        const proposed = [
          { id: 'loop', source: c, target: c },
          { id: 'again', source: a, target: b },
          { id: 'nowhere', source: a, target: 'ghost' },
          { id: 'bc', source: b, target: c },
          { id: 'back', source: c, target: a },
        ];
        const res = await expectNothingAppendedOk(flowId, () => api('POST', `/flows/${flowId}/connections/validate`, { connections: proposed }));
        expect(res.body.valid).to.equal(false);
        const codes = res.body.problems.map((p: { code: string }) => p.code);
        expect(codes).to.include.members(['SELF_LOOP', 'DUPLICATE_EDGE', 'DANGLING_EDGE', 'CYCLE']);
        expect(res.body.problems.find((p: { code: string }) => p.code === 'SELF_LOOP').edgeId).to.equal('loop');
        expect(res.body.problems.find((p: { code: string }) => p.code === 'DUPLICATE_EDGE')).to.include({ edgeId: 'again', duplicateOf: ab.id });
        expect(res.body.problems.find((p: { code: string }) => p.code === 'DANGLING_EDGE')).to.deep.include({ edgeId: 'nowhere', nodeIds: ['ghost'] });
        expect(res.body.problems.find((p: { code: string }) => p.code === 'CYCLE').nodeIds).to.have.members([a, b, c]);
        expect(await edgesOf(flowId)).to.have.length(1);
      });

      async function expectNothingAppendedOk(flowId: string, send: () => Promise<{ status: number; body: any; text: string }>) {
        const before = await revisionOf(flowId);
        const res = await send();
        expect(res.status, res.text).to.equal(200);
        expect(await revisionOf(flowId)).to.equal(before);
        return res;
      }

      it('400 on a malformed proposal or unknown field, 401, 404', async () => {
        const { flowId } = await flowWithNodes(1);
        expect(fields(await api('POST', `/flows/${flowId}/connections/validate`, { connections: [{ source: 'a' }] }))).to.include('body.connections.0.target');
        expect(fields(await api('POST', `/flows/${flowId}/connections/validate`, { everything: true }))).to.include('body.everything');
        expectError(await api('POST', `/flows/${flowId}/connections/validate`, {}, {}), 401);
        expectError(await api('POST', `/flows/${randomUUID()}/connections/validate`, {}), 404, 'FLOW_NOT_FOUND');
      });
    });

    describe('batch create', () => {
      it('creates all the connections in one append (201, in order)', async () => {
        const { flowId, nodes } = await flowWithNodes(3);
        const before = await revisionOf(flowId);
        const res = await api('POST', `/flows/${flowId}/connections/batch`, { connections: [{ source: nodes[0], target: nodes[1] }, { source: nodes[1], target: nodes[2], label: 'then' }] });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.connections.map((e: { source: string; target: string }) => [e.source, e.target])).to.deep.equal([
          [nodes[0], nodes[1]],
          [nodes[1], nodes[2]],
        ]);
        expect(res.body.connections[1].label).to.equal('then');
        const appended = await svc.services.eventStore.readStream(flowStreamId(flowId), { fromRevision: before + 1 });
        expect(appended.map((e) => e.type)).to.deep.equal(['ConnectionAdded', 'ConnectionAdded']);
        expect(new Set(appended.map((e) => e.metadata.requestId)).size, 'one request').to.equal(1);
        expect(await edgesOf(flowId)).to.deep.equal(res.body.connections);
      });

      it('is all or none: one bad connection refuses the batch, naming its index, and nothing is appended', async () => {
        const { flowId, nodes } = await flowWithNodes(3);
        const [a, b, c] = nodes;
        const batch = (connections: object[]) => () => api('POST', `/flows/${flowId}/connections/batch`, { connections });
        const cycle = await expectNothingAppended(flowId, batch([{ source: a, target: b }, { source: b, target: c }, { source: c, target: a }]), 400, 'CYCLE');
        expect(cycle.body.error.details.index).to.equal(2);
        await expectNothingAppended(flowId, batch([{ source: a, target: b }, { source: a, target: b }]), 400, 'DUPLICATE_EDGE');
        await expectNothingAppended(flowId, batch([{ source: a, target: b }, { source: b, target: 'ghost' }]), 400, 'DANGLING_EDGE');
        const field = await expectNothingAppended(flowId, batch([{ source: a, target: b }, { source: b }]), 400, 'VALIDATION_FAILED');
        expect(fields(field)).to.include('body.connections.1.target');
        await expectNothingAppended(flowId, batch([]), 400, 'VALIDATION_FAILED');
        expect(await edgesOf(flowId)).to.deep.equal([]);
      });

      it('401, 403, 404, 412', async () => {
        const { flowId, nodes } = await flowWithNodes(2);
        const body = { connections: [{ source: nodes[0], target: nodes[1] }] };
        await expectNothingAppended(flowId, () => api('POST', `/flows/${flowId}/connections/batch`, body, {}), 401);
        await expectNothingAppended(flowId, () => api('POST', `/flows/${flowId}/connections/batch`, body, viewOnly), 403, 'FORBIDDEN');
        await expectNothingAppended(flowId, () => api('POST', `/flows/${flowId}/connections/batch`, body, { ...owner.auth, 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        expectError(await api('POST', `/flows/${randomUUID()}/connections/batch`, body), 404, 'FLOW_NOT_FOUND');
      });
    });

    describe('batch delete', () => {
      it('deletes all the named connections in one append; repeated ids count once', async () => {
        const { flowId, nodes } = await flowWithNodes(3);
        const ab = await connect(flowId, nodes[0], nodes[1]);
        const bc = await connect(flowId, nodes[1], nodes[2]);
        const ac = await connect(flowId, nodes[0], nodes[2]);
        const res = await api('POST', `/flows/${flowId}/connections/batch-delete`, { connectionIds: [ab.id, bc.id, ab.id] });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.deleted).to.deep.equal([ab.id, bc.id]);
        expect((await edgesOf(flowId)).map((e) => e.id)).to.deep.equal([ac.id]);
      });

      it('is all or none: one unknown id refuses the batch, naming it; 400, 401, 403, 404, 412', async () => {
        const { flowId, nodes } = await flowWithNodes(2);
        const ab = await connect(flowId, nodes[0], nodes[1]);
        const send = (body: unknown, headers: Record<string, string> = owner.auth) => () => api('POST', `/flows/${flowId}/connections/batch-delete`, body, headers);
        const missing = await expectNothingAppended(flowId, send({ connectionIds: [ab.id, 'ghost'] }), 404, 'CONNECTION_NOT_FOUND');
        expect(missing.body.error.details.connectionIds).to.deep.equal(['ghost']);
        await expectNothingAppended(flowId, send({ connectionIds: [] }), 400, 'VALIDATION_FAILED');
        await expectNothingAppended(flowId, send({ connectionIds: [ab.id] }, {}), 401);
        await expectNothingAppended(flowId, send({ connectionIds: [ab.id] }, viewOnly), 403, 'FORBIDDEN');
        await expectNothingAppended(flowId, send({ connectionIds: [ab.id] }, { ...owner.auth, 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        expectError(await api('POST', `/flows/${randomUUID()}/connections/batch-delete`, { connectionIds: [ab.id] }), 404, 'FLOW_NOT_FOUND');
        expect(await edgesOf(flowId)).to.have.length(1);
      });
    });

    it("tenant isolation: another user gets 404 on every route with the owner's ids, with or without If-Match", async () => {
      const { flowId, nodes } = await flowWithNodes(3);
      const edge = await connect(flowId, nodes[0], nodes[1]);
      const version = await revisionOf(flowId);
      const probes: Array<[string, string, unknown]> = [
        ['GET', `/flows/${flowId}/connections`, undefined],
        ['POST', `/flows/${flowId}/connections`, { source: nodes[1], target: nodes[2] }],
        ['PUT', `/flows/${flowId}/connections/${edge.id}`, { label: 'mine now' }],
        ['DELETE', `/flows/${flowId}/connections/${edge.id}`, undefined],
        ['POST', `/flows/${flowId}/connections/validate`, {}],
        ['POST', `/flows/${flowId}/connections/batch`, { connections: [{ source: nodes[1], target: nodes[2] }] }],
        ['POST', `/flows/${flowId}/connections/batch-delete`, { connectionIds: [edge.id] }],
      ];
      for (const [method, path, body] of probes) {
        for (const extra of [{}, { 'If-Match': `"${version}"` }, { 'If-Match': `"${version + 5}"` }] as Array<Record<string, string>>) {
          const res = await api(method, path, body, { ...other.auth, ...extra });
          expectError(res, 404, 'FLOW_NOT_FOUND');
        }
      }
      expect(await revisionOf(flowId)).to.equal(version);
      expect(await edgesOf(flowId)).to.deep.equal([edge]);
    });
  });
}
