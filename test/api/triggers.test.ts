import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { verifyTriggerKey } from '../../api/middleware/trigger-key.js';
import { flowStreamId } from '../../domain/flows/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { sha256 } from '../../commands/users-credentials.js';
import { call } from '../support/http.js';
import { registerUser, viewOnlyKey, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, fields } from './orgs-support.js';
import { httpStatusOf } from '../../api/errors.js';

for (const mode of availableModes()) {
  describe(`Triggers (${mode})`, function () {
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

    async function createFlow(): Promise<string> {
      const res = await api('POST', '/flows', { name: `Flow ${randomUUID().slice(0, 8)}` });
      expect(res.status, res.text).to.equal(201);
      return res.body.flow.id;
    }
    async function addNode(flowId: string): Promise<string> {
      const res = await api('POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: 'x' } });
      expect(res.status, res.text).to.equal(201);
      return res.body.node.id;
    }
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
    /** The public trigger check the execution routes will run: resolves with the status it would answer. */
    async function triggerStatus(flowId: string, nodeId: string | null, key: string | undefined, method = 'POST'): Promise<number> {
      try {
        await verifyTriggerKey(svc.services, flowId, nodeId, key, method);
        return 200;
      } catch (err) {
        if (err instanceof DomainError) return httpStatusOf(err);
        throw err;
      }
    }

    describe("the flow's trigger", () => {
      it('updates the settings partially and answers them, never a key or hash', async () => {
        const flowId = await createFlow();
        const schema = { type: 'object', required: ['email'], properties: { email: { type: 'string' } } };
        const res = await api('PUT', `/flows/${flowId}/trigger`, { enabled: true, allowedMethods: ['POST', 'GET'], inputSchema: schema });
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({
          success: true,
          trigger: { enabled: true, allowedMethods: ['POST', 'GET'], inputSchema: schema, hasKey: false, keyCreatedAt: null },
        });
        expect(res.headers.get('etag')).to.equal(`"${await revisionOf(flowId)}"`);
        const off = await api('PUT', `/flows/${flowId}/trigger`, { enabled: false, inputSchema: null });
        expect(off.body.trigger).to.deep.include({ enabled: false, allowedMethods: ['POST', 'GET'], inputSchema: null });
        const version = await revisionOf(flowId);
        expect((await api('PUT', `/flows/${flowId}/trigger`, { enabled: false })).status).to.equal(200);
        expect(await revisionOf(flowId), 'an unchanged setting appends nothing').to.equal(version);
      });

      it('400 naming the field, 401, 403, 404, 412; nothing appended', async () => {
        const flowId = await createFlow();
        const put = (body: unknown, headers: Record<string, string> = owner.auth) => () => api('PUT', `/flows/${flowId}/trigger`, body, headers);
        expect(fields(await expectNothingAppended(flowId, put({ allowedMethods: ['FETCH'] }), 400, 'VALIDATION_FAILED'))).to.include('body.allowedMethods.0');
        expect(fields(await expectNothingAppended(flowId, put({ allowedMethods: [] }), 400, 'VALIDATION_FAILED'))).to.include('body.allowedMethods');
        expect(fields(await expectNothingAppended(flowId, put({ enabled: 'yes' }), 400, 'VALIDATION_FAILED'))).to.include('body.enabled');
        expect(fields(await expectNothingAppended(flowId, put({ key: 'mine' }), 400, 'VALIDATION_FAILED'))).to.include('body.key');
        await expectNothingAppended(flowId, put({}), 400, 'VALIDATION_FAILED');
        await expectNothingAppended(flowId, put({ enabled: true }, {}), 401);
        await expectNothingAppended(flowId, put({ enabled: true }, viewOnly), 403, 'FORBIDDEN');
        await expectNothingAppended(flowId, put({ enabled: true }, { ...owner.auth, 'If-Match': '"7"' }), 412, 'PRECONDITION_FAILED');
        expectError(await api('PUT', `/flows/${randomUUID()}/trigger`, { enabled: true }), 404, 'FLOW_NOT_FOUND');
      });

      it('regenerates the key: shown once, stored hashed, the old key refused at once', async () => {
        const flowId = await createFlow();
        await api('PUT', `/flows/${flowId}/trigger`, { enabled: true });
        const first = await api('POST', `/flows/${flowId}/trigger/regenerate-key`);
        expect(first.status, first.text).to.equal(200);
        expect(first.body.success).to.equal(true);
        expect(first.body.key).to.match(/^ftk_[A-Za-z0-9_-]{43}$/);
        expect(first.body.keyCreatedAt).to.be.a('string');
        expect(first.headers.get('cache-control')).to.equal('no-store');
        expect(await triggerStatus(flowId, null, first.body.key)).to.equal(200);

        const second = await api('POST', `/flows/${flowId}/trigger/regenerate-key`);
        expect(second.body.key).to.not.equal(first.body.key);
        // No wait: the answer came after the read model had the new hash.
        expect(await triggerStatus(flowId, null, first.body.key)).to.equal(401);
        expect(await triggerStatus(flowId, null, second.body.key)).to.equal(200);

        const settings = await api('PUT', `/flows/${flowId}/trigger`, { allowedMethods: ['PUT'] });
        expect(settings.body.trigger).to.include({ hasKey: true, keyCreatedAt: second.body.keyCreatedAt });
        expect(settings.text).to.not.include(second.body.key).and.not.include(sha256(second.body.key));

        const log = JSON.stringify(await svc.services.eventStore.readStream(flowStreamId(flowId)));
        expect(log).to.not.include(first.body.key).and.not.include(second.body.key);
        expect(log).to.include(sha256(second.body.key));
      });

      it('regenerate-key: 400 on a malformed If-Match or flow id, 401, 403, 404, 412', async () => {
        const flowId = await createFlow();
        const regen = (headers: Record<string, string>) => () => api('POST', `/flows/${flowId}/trigger/regenerate-key`, undefined, headers);
        await expectNothingAppended(flowId, regen({}), 401);
        await expectNothingAppended(flowId, regen(viewOnly), 403, 'FORBIDDEN');
        await expectNothingAppended(flowId, regen({ ...owner.auth, 'If-Match': '"9"' }), 412, 'PRECONDITION_FAILED');
        expect(fields(await expectNothingAppended(flowId, regen({ ...owner.auth, 'If-Match': 'W/"x"' }), 400, 'VALIDATION_FAILED'))).to.deep.equal(['headers.if-match']);
        expect(fields(await api('POST', '/flows/bad%24id/trigger/regenerate-key'))).to.include('params.flowId');
        expectError(await api('POST', `/flows/${randomUUID()}/trigger/regenerate-key`), 404, 'FLOW_NOT_FOUND');
      });
    });

    describe("a node's trigger", () => {
      it('updates its settings and regenerates its key, separate from the flow key', async () => {
        const flowId = await createFlow();
        const nodeId = await addNode(flowId);
        const res = await api('PUT', `/flows/${flowId}/nodes/${nodeId}/trigger`, { enabled: true, allowedMethods: ['POST'] });
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({ success: true, nodeId, trigger: { enabled: true, allowedMethods: ['POST'], inputSchema: null, hasKey: false, keyCreatedAt: null } });
        const key = await api('POST', `/flows/${flowId}/nodes/${nodeId}/trigger/regenerate-key`);
        expect(key.status, key.text).to.equal(200);
        expect(key.body).to.include({ success: true, nodeId });
        expect(key.body.key).to.match(/^ftk_/);
        expect(await triggerStatus(flowId, nodeId, key.body.key)).to.equal(200);
        expect(await triggerStatus(flowId, null, key.body.key), 'a node key is no flow key').to.equal(401);
        const again = await api('POST', `/flows/${flowId}/nodes/${nodeId}/trigger/regenerate-key`);
        expect(await triggerStatus(flowId, nodeId, key.body.key)).to.equal(401);
        expect(await triggerStatus(flowId, nodeId, again.body.key)).to.equal(200);
        const disabled = await api('PUT', `/flows/${flowId}/nodes/${nodeId}/trigger`, { enabled: false });
        expect(disabled.body.trigger).to.include({ enabled: false, hasKey: true });
        expect(await triggerStatus(flowId, nodeId, again.body.key)).to.equal(403);
      });

      it('400, 401, 403, 404 (unknown flow, unknown node, a node of another flow), 412', async () => {
        const flowId = await createFlow();
        const nodeId = await addNode(flowId);
        const elsewhere = await addNode(await createFlow());
        const put = (body: unknown, headers: Record<string, string> = owner.auth, node = nodeId) => () => api('PUT', `/flows/${flowId}/nodes/${node}/trigger`, body, headers);
        const regen = (headers: Record<string, string> = owner.auth, node = nodeId) => () => api('POST', `/flows/${flowId}/nodes/${node}/trigger/regenerate-key`, undefined, headers);
        expect(fields(await expectNothingAppended(flowId, put({ allowedMethods: ['POST', 'POST'] }), 400, 'VALIDATION_FAILED'))).to.include('body.allowedMethods');
        expect(fields(await api('PUT', `/flows/${flowId}/nodes/bad$id/trigger`, { enabled: true }))).to.include('params.nodeId');
        await expectNothingAppended(flowId, put({ enabled: true }, {}), 401);
        await expectNothingAppended(flowId, regen({}), 401);
        await expectNothingAppended(flowId, put({ enabled: true }, viewOnly), 403, 'FORBIDDEN');
        await expectNothingAppended(flowId, regen(viewOnly), 403, 'FORBIDDEN');
        await expectNothingAppended(flowId, put({ enabled: true }, owner.auth, 'ghost'), 404, 'NODE_NOT_FOUND');
        await expectNothingAppended(flowId, regen(owner.auth, 'ghost'), 404, 'NODE_NOT_FOUND');
        await expectNothingAppended(flowId, put({ enabled: true }, owner.auth, elsewhere), 404, 'NODE_NOT_FOUND');
        await expectNothingAppended(flowId, regen(owner.auth, elsewhere), 404, 'NODE_NOT_FOUND');
        expectError(await api('PUT', `/flows/${randomUUID()}/nodes/${nodeId}/trigger`, { enabled: true }), 404, 'FLOW_NOT_FOUND');
        expectError(await api('POST', `/flows/${randomUUID()}/nodes/${nodeId}/trigger/regenerate-key`), 404, 'FLOW_NOT_FOUND');
        await expectNothingAppended(flowId, put({ enabled: true }, { ...owner.auth, 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
        await expectNothingAppended(flowId, regen({ ...owner.auth, 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
      });
    });

    it("tenant isolation: another user gets 404 on every trigger route with the owner's ids; the owner's key keeps working", async () => {
      const flowId = await createFlow();
      const nodeId = await addNode(flowId);
      await api('PUT', `/flows/${flowId}/trigger`, { enabled: true });
      const { key } = (await api('POST', `/flows/${flowId}/trigger/regenerate-key`)).body;
      const version = await revisionOf(flowId);
      const probes: Array<[string, string, unknown]> = [
        ['PUT', `/flows/${flowId}/trigger`, { enabled: false }],
        ['POST', `/flows/${flowId}/trigger/regenerate-key`, undefined],
        ['PUT', `/flows/${flowId}/nodes/${nodeId}/trigger`, { enabled: true }],
        ['POST', `/flows/${flowId}/nodes/${nodeId}/trigger/regenerate-key`, undefined],
      ];
      for (const [method, path, body] of probes) {
        for (const extra of [{}, { 'If-Match': `"${version}"` }, { 'If-Match': '"0"' }] as Array<Record<string, string>>) {
          expectError(await api(method, path, body, { ...other.auth, ...extra }), 404, 'FLOW_NOT_FOUND');
        }
      }
      expect(await revisionOf(flowId)).to.equal(version);
      expect(await triggerStatus(flowId, null, key)).to.equal(200);
    });
  });
}
