import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { flowStreamId } from '../../domain/flows/index.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { flowClient, type Res } from './flows-support.js';

/**
 * Sealed node secrets (issue 21, item 2): a webhook node's header values and its `{"$secret"}`
 * variables never appear in clear in the log, in any read, audit event or version; the node's
 * call still carries them; a mask sent back keeps them; events written in clear are masked on
 * read and re-written by the operators' reseal.
 */
for (const mode of availableModes()) {
  describe(`sealed node secrets (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let operator: RegisteredUser;
    let server: Server;
    let hookUrl: string;
    const seen: IncomingHttpHeaders[] = [];
    const client = flowClient(() => svc);
    const { as } = client;
    const TOKEN = `tok_${randomBytes(12).toString('hex')}`;
    const VAR_SECRET = `var_${randomBytes(12).toString('hex')}`;
    const operatorEmail = `ops-${randomBytes(4).toString('hex')}@example.test`;

    /** Every place the log holds: through the store (upcast) and as stored (beneath the upcasters). */
    async function logText(): Promise<string> {
      const read = await svc.services.eventStore.readAll({ maxCount: 100_000 });
      const stored = await svc.services.storedEvents.read({ maxCount: 100_000, categories: ['flow', 'run'] });
      return JSON.stringify(read) + JSON.stringify(stored);
    }
    const noSecretIn = (what: string, text: string) => {
      expect(text.includes(TOKEN), `the token appears in ${what}`).to.equal(false);
      expect(text.includes(VAR_SECRET), `the secret variable appears in ${what}`).to.equal(false);
    };
    /** Every read of a flow: the flow, its nodes, the list, every audit event, every version. */
    async function everyRead(flowId: string): Promise<string> {
      const answers: Res[] = [
        await as(alice, 'GET', `/flows/${flowId}`),
        await as(alice, 'GET', `/flows/${flowId}/nodes`),
        await as(alice, 'GET', '/flows'),
        await as(alice, 'GET', `/flows/${flowId}/events?limit=100`),
      ];
      for (const res of answers) expect(res.status, res.text).to.equal(200);
      const events = answers[3].body.items as Array<{ revision: number }>;
      for (const { revision } of events) {
        const version = await as(alice, 'GET', `/flows/${flowId}/versions/${revision}`);
        expect(version.status, version.text).to.equal(200);
        answers.push(version);
      }
      return answers.map((r) => r.text).join('\n');
    }
    const runNode = async (flowId: string, nodeId: string) => {
      const before = seen.length;
      const res = await as(alice, 'POST', `/flows/${flowId}/nodes/${nodeId}/process`, { inputs: { q: 1 } });
      expect(res.status, res.text).to.equal(200);
      noSecretIn('the run answer', res.text);
      // The run's events snapshot the node (RunRequested): masked there too.
      const runEvents = await as(alice, 'GET', `/processes/${res.body.processId}/events?limit=100`);
      expect(runEvents.status, runEvents.text).to.equal(200);
      expect(runEvents.text).to.include('RunRequested').and.include('••••');
      noSecretIn('the run events', runEvents.text);
      expect(runEvents.text).to.not.include('sealed:');
      expect(seen.length).to.equal(before + 1);
      return seen[seen.length - 1];
    };
    const webhookNode = (headers: Record<string, string>, variables: Record<string, unknown>) => ({
      type: 'custom',
      position: { x: 0, y: 0 },
      data: { nodeType: 'webhook', webhookConfig: { url: hookUrl, method: 'POST', headers }, variables },
    });
    const secretNode = () => webhookNode({ Authorization: `Bearer ${TOKEN}`, 'X-Var': '{{variables.apiKey}}' }, { region: 'eu', apiKey: { $secret: VAR_SECRET } });
    const expectMasked = (node: { data: { webhookConfig: { headers: Record<string, string> }; variables: Record<string, unknown> } }) => {
      expect(node.data.webhookConfig.headers).to.deep.equal({ Authorization: `••••${TOKEN.slice(-4)}`, 'X-Var': `••••ey}}` });
      expect(node.data.variables).to.deep.equal({ region: 'eu', apiKey: { $secret: `••••${VAR_SECRET.slice(-4)}` } });
    };

    before(async () => {
      server = createServer((req, res) => {
        seen.push(req.headers);
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      hookUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
      svc = await startTestService(mode, { ALLOW_PRIVATE_NETWORK: 'true', ADMIN_EMAILS: operatorEmail, RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      alice = await registerUser(svc.baseUrl);
      operator = await registerUser(svc.baseUrl, { email: operatorEmail });
    });
    after(async () => {
      await svc?.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('seals header values and secret variables: masked in every read, absent from the log, sent by the node', async () => {
      const flowId = await client.newFlow(alice);
      const added = await as(alice, 'POST', `/flows/${flowId}/nodes`, secretNode());
      expect(added.status, added.text).to.equal(201);
      expectMasked(added.body.node);
      expectMasked((await client.getFlow(alice, flowId)).nodes[0]);
      const reads = await everyRead(flowId);
      noSecretIn('the reads', reads);
      expect(reads).to.not.include('sealed:');
      noSecretIn('the event log', await logText());

      const call = await runNode(flowId, added.body.node.id);
      expect(call.authorization).to.equal(`Bearer ${TOKEN}`);
      expect(call['x-var'], 'a secret variable reaches the template in clear').to.equal(VAR_SECRET);
      noSecretIn('the event log after a run', await logText());
      noSecretIn('the node history', (await as(alice, 'GET', `/flows/${flowId}/nodes/${added.body.node.id}/history`)).text);
    });

    it('keeps the stored secrets when the masks come back (node update, whole-flow replace)', async () => {
      const flowId = await client.newFlow(alice);
      const node = await client.addNode(alice, flowId, secretNode());
      const flow = await client.getFlow(alice, flowId);

      const update = await as(alice, 'PUT', `/flows/${flowId}/nodes/${node.id}`, { data: { ...flow.nodes[0].data, agentName: 'renamed' } });
      expect(update.status, update.text).to.equal(200);
      expectMasked(update.body.node);
      expect((await runNode(flowId, node.id)).authorization).to.equal(`Bearer ${TOKEN}`);

      const replaced = await as(alice, 'PUT', `/flows/${flowId}`, { name: flow.name, nodes: flow.nodes, edges: flow.edges });
      expect(replaced.status, replaced.text).to.equal(200);
      expectMasked(replaced.body.flow.nodes[0]);
      const call = await runNode(flowId, node.id);
      expect(call.authorization).to.equal(`Bearer ${TOKEN}`);
      expect(call['x-var']).to.equal(VAR_SECRET);

      // A mask that stands for nothing stored there is refused, not sent as a header.
      const bad = await as(alice, 'PUT', `/flows/${flowId}/nodes/${node.id}`, { data: { webhookConfig: { url: hookUrl, headers: { 'X-Other': '••••abcd' } } } });
      expect(bad.status, bad.text).to.equal(400);
      expect(bad.body.error.details.fields.map((f: { field: string }) => f.field)).to.deep.equal(['body.data.webhookConfig.headers.X-Other']);
      // A new value replaces the secret.
      const changed = await as(alice, 'PUT', `/flows/${flowId}/nodes/${node.id}`, { data: { webhookConfig: { url: hookUrl, headers: { Authorization: 'Bearer rotated-0123456789' } } } });
      expect(changed.status, changed.text).to.equal(200);
      expect(changed.body.node.data.webhookConfig.headers).to.deep.equal({ Authorization: '••••6789' });
      expect((await runNode(flowId, node.id)).authorization).to.equal('Bearer rotated-0123456789');
    });

    it('masks events written in clear, and the operators\' reseal removes them from the log', async () => {
      const flowId = randomUUID();
      const streamId = flowStreamId(flowId);
      const metadata = { actorId: alice.user.id, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, occurredAt: new Date().toISOString() };
      const at = metadata.occurredAt;
      const clear = secretNode();
      // As an older version wrote them: straight into the store, secrets in clear, schema version 1.
      const appended = await svc.services.eventStore.append(
        streamId,
        [
          { id: randomUUID(), type: 'FlowCreated', data: { flowId, name: 'legacy', description: '', ownerId: alice.user.id, orgId: null, workspaceId: null, nodes: [], edges: [], createdAt: at }, metadata, schemaVersion: 1 },
          { id: randomUUID(), type: 'NodeAdded', data: { node: { id: 'hook', ...clear }, duplicatedFrom: null, at }, metadata, schemaVersion: 1 },
          { id: randomUUID(), type: 'NodeUpdated', data: { nodeId: 'hook', data: { webhookConfig: { ...clear.data.webhookConfig, headers: { ...clear.data.webhookConfig.headers, 'X-Extra': `extra ${TOKEN}` } } }, at }, metadata, schemaVersion: 1 },
        ],
        'no_stream',
      );
      await svc.services.projections.waitFor(appended.position, streamId, 15_000);
      const stored = JSON.stringify(await svc.services.storedEvents.read({ maxCount: 100_000, categories: ['flow'] }));
      expect(stored.includes(TOKEN), 'the test wrote the token in clear').to.equal(true);

      const flow = await waitUntil('the legacy flow is projected', async () => {
        const res = await as(alice, 'GET', `/flows/${flowId}`);
        return res.status === 200 ? res.body.flow : null;
      });
      expect(flow.nodes[0].data.webhookConfig.headers.Authorization).to.equal(`••••${TOKEN.slice(-4)}`);
      noSecretIn('the reads of a flow written in clear', await everyRead(flowId));
      const read = JSON.stringify(await svc.services.eventStore.readStream(streamId));
      noSecretIn('the events as read (upcast)', read);
      expect((await runNode(flowId, 'hook')).authorization, 'the node still calls with the real token').to.equal(`Bearer ${TOKEN}`);

      expect((await as(alice, 'POST', '/admin/flows/secrets/reseal')).status, 'operators only').to.equal(403);
      const resealed = await as(operator, 'POST', '/admin/flows/secrets/reseal');
      expect(resealed.status, resealed.text).to.equal(200);
      expect(resealed.body).to.deep.include({ success: true, adapter: svc.services.storedEvents.adapter, rewritesInPlace: svc.services.storedEvents.rewrite !== null });
      expect(resealed.body.runs, 'runs of the legacy flow were requested after the upgrade: their snapshots are sealed').to.deep.equal({ streams: 0, clearEvents: 0, rewrittenEvents: 0 });
      const mine = (resealed.body.flows as Array<{ flowId: string; clearEvents: number; rewrittenEvents: number; revision: number }>).find((f) => f.flowId === flowId);
      expect(mine, resealed.text).to.deep.include({ flowId, clearEvents: 2, rewrittenEvents: svc.services.storedEvents.rewrite ? 2 : 0 });
      expect(mine!.revision, 'appended after the three events written in clear').to.be.greaterThan(2);
      if (svc.services.storedEvents.rewrite) {
        noSecretIn('the log as stored after the reseal', JSON.stringify(await svc.services.storedEvents.read({ maxCount: 100_000, categories: ['flow'] })));
        noSecretIn('the whole log after the reseal', await logText());
      }
      const events = await as(alice, 'GET', `/flows/${flowId}/events?order=asc`);
      expect(events.body.items.map((e: { type: string }) => e.type)).to.include('FlowSecretsResealed');
      noSecretIn('the reads after the reseal', await everyRead(flowId));
      expect((await runNode(flowId, 'hook')).authorization, 'and still calls with it after the reseal').to.equal(`Bearer ${TOKEN}`);

      const again = await as(operator, 'POST', '/admin/flows/secrets/reseal');
      expect(again.status, again.text).to.equal(200);
      expect(again.body.flows.map((f: { flowId: string }) => f.flowId), 'nothing left to reseal').to.not.include(flowId);
    });
  });
}
