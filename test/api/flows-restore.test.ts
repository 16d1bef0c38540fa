import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient, transformNode } from './flows-support.js';

/**
 * Issue 33 item 3: a flow rolled back to an earlier version as a new version, audited like every
 * change (FlowReplaced with restoredFrom), node secrets brought back sealed, triggers left alone.
 */
for (const mode of availableModes()) {
  describe(`flows: restore an earlier version (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let mallory: RegisteredUser;
    let server: Server;
    let hookUrl: string;
    const seen: IncomingHttpHeaders[] = [];
    const client = flowClient(() => svc);
    const { as } = client;
    const TOKEN = `tok_${randomBytes(12).toString('hex')}`;

    before(async () => {
      server = createServer((req, res) => {
        seen.push(req.headers);
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      hookUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
      svc = await startTestService(mode, { ALLOW_PRIVATE_NETWORK: 'true' });
      alice = await registerUser(svc.baseUrl);
      mallory = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('brings back the nodes and edges of a version as a new version, and the audit trail says who restored which', async () => {
      const flowId = await client.newFlow(alice, 'restore me'); // v0
      const a = await client.addNode(alice, flowId, transformNode(0)); // v1
      const b = await client.addNode(alice, flowId, transformNode(200)); // v2
      const edge = await as(alice, 'POST', `/flows/${flowId}/connections`, { source: a.id, target: b.id }); // v3
      expect(edge.status, edge.text).to.equal(201);
      const atThree = await as(alice, 'GET', `/flows/${flowId}/versions/3`);
      expect(atThree.status, atThree.text).to.equal(200);
      expect((await as(alice, 'DELETE', `/flows/${flowId}/nodes/${a.id}`)).status).to.equal(200); // v4 (the edge goes too)
      expect((await as(alice, 'PATCH', `/flows/${flowId}/name`, { name: 'renamed' })).status).to.equal(200); // v5

      const restored = await as(alice, 'POST', `/flows/${flowId}/versions/3/restore`);
      expect(restored.status, restored.text).to.equal(200);
      expect(restored.headers.get('etag')).to.equal('"6"');
      const flow = restored.body.flow;
      expect(flow.version).to.equal(6);
      expect(flow.name).to.equal('restore me');
      expect(flow.nodes).to.deep.equal(atThree.body.flow.nodes);
      expect(flow.edges).to.deep.equal(atThree.body.flow.edges);
      expect((await client.getFlow(alice, flowId)).nodes.map((n: { id: string }) => n.id)).to.deep.equal([a.id, b.id]);

      const [last] = (await as(alice, 'GET', `/flows/${flowId}/events?limit=1`)).body.items;
      expect(last).to.include({ revision: 6, type: 'FlowReplaced', actorId: alice.user.id });
      expect(last.data.restoredFrom).to.equal(3);
      // Later versions are still there to go back to.
      const again = await as(alice, 'POST', `/flows/${flowId}/versions/5/restore`);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.flow.nodes.map((n: { id: string }) => n.id)).to.deep.equal([b.id]);
      expect(again.body.flow.name).to.equal('renamed');
    });

    it('restores node secrets sealed (masked in the answer, sent by the node) and leaves the trigger as it is now', async () => {
      const flowId = await client.newFlow(alice);
      const node = await client.addNode(alice, flowId, {
        type: 'custom',
        position: { x: 0, y: 0 },
        data: { nodeType: 'webhook', webhookConfig: { url: hookUrl, method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } } },
      }); // v1
      expect((await as(alice, 'DELETE', `/flows/${flowId}/nodes/${node.id}`)).status).to.equal(200); // v2
      const trigger = await as(alice, 'PUT', `/flows/${flowId}/trigger`, { enabled: true }); // v3
      expect(trigger.status, trigger.text).to.equal(200);

      const restored = await as(alice, 'POST', `/flows/${flowId}/versions/1/restore`);
      expect(restored.status, restored.text).to.equal(200);
      expect(restored.text).to.not.include(TOKEN);
      expect(restored.body.flow.nodes[0].data.webhookConfig.headers.Authorization).to.equal(`••••${TOKEN.slice(-4)}`);
      expect(restored.body.flow.trigger.enabled, 'the trigger stays as it is now').to.equal(true);
      const before = seen.length;
      const run = await as(alice, 'POST', `/flows/${flowId}/nodes/${node.id}/process`, { inputs: {} });
      expect(run.status, run.text).to.equal(200);
      expect(seen.length).to.equal(before + 1);
      expect(seen[seen.length - 1].authorization).to.equal(`Bearer ${TOKEN}`);
    });

    it('refuses: a version beyond the stream (404), a stale If-Match (412), a deleted flow, another tenant, a bad version (400)', async () => {
      const flowId = await client.newFlow(alice);
      await client.addNode(alice, flowId, transformNode()); // v1
      await client.refusedWithoutEvents(() => as(alice, 'POST', `/flows/${flowId}/versions/9/restore`), 404, 'VERSION_NOT_FOUND');
      await client.refusedWithoutEvents(() => as(alice, 'POST', `/flows/${flowId}/versions/0/restore`, undefined, { 'If-Match': '"0"' }), 412);
      await client.refusedWithoutEvents(() => as(mallory, 'POST', `/flows/${flowId}/versions/0/restore`), 404, 'FLOW_NOT_FOUND');
      expectError(await as(alice, 'POST', `/flows/${flowId}/versions/x1/restore`), 400, 'VALIDATION_FAILED');
      const ok = await as(alice, 'POST', `/flows/${flowId}/versions/0/restore`, undefined, { 'If-Match': '"1"' });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.flow.nodes).to.deep.equal([]);

      expect((await as(alice, 'DELETE', `/flows/${flowId}`)).status).to.equal(200); // v3
      await client.refusedWithoutEvents(() => as(alice, 'POST', `/flows/${flowId}/versions/1/restore`), 404, 'FLOW_NOT_FOUND');
      await client.refusedWithoutEvents(() => as(alice, 'POST', `/flows/${flowId}/versions/3/restore`), 409, 'VERSION_DELETED');
    });
  });
}
