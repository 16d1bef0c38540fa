import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';

/**
 * Issue 33 item 1: POST /processes/{id}/replay. A failed run replayed from its failing node after
 * a fix completes, reusing the upstream outputs (the receiver counts: no upstream webhook is called
 * again); with sideEffects "recorded" nothing outside is called, and a node with no fitting
 * recording is refused before anything runs.
 */
for (const mode of availableModes()) {
  describe(`runs: replay (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let mallory: RegisteredUser;
    let server: Server;
    let base: string;
    const calls = new Map<string, number>();
    const client = flowClient(() => svc);
    const { as } = client;

    before(async () => {
      server = createServer((req, res) => {
        const path = req.url ?? '/';
        calls.set(path, (calls.get(path) ?? 0) + 1);
        req.resume();
        req.on('end', () => {
          if (path.startsWith('/fail')) res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
          else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path, n: calls.get(path) }));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      svc = await startTestService(mode, { ALLOW_PRIVATE_NETWORK: 'true' });
      alice = await registerUser(svc.baseUrl);
      mallory = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    const webhook = (path: string, x: number) => ({ type: 'custom', position: { x, y: 0 }, data: { nodeType: 'webhook', webhookConfig: { url: `${base}${path}`, method: 'POST' } } });
    const connect = async (flowId: string, source: string, target: string) => {
      const res = await as(alice, 'POST', `/flows/${flowId}/connections`, { source, target });
      expect(res.status, res.text).to.equal(201);
    };
    const count = (path: string) => calls.get(path) ?? 0;
    const nodeOf = (run: { nodes: Array<{ nodeId: string }> }, id: string) => run.nodes.find((n) => n.nodeId === id) as Record<string, any>;

    /** upstream webhook → webhook that fails → transform; the first run fails at the second node. */
    async function failedRun(tag: string) {
      const flowId = await client.newFlow(alice);
      const up = (await client.addNode(alice, flowId, webhook(`/up-${tag}`, 0))).id;
      const mid = (await client.addNode(alice, flowId, webhook(`/fail-${tag}`, 200))).id;
      const end = (await client.addNode(alice, flowId, { type: 'custom', position: { x: 400, y: 0 }, data: { nodeType: 'transform', template: 'done: {{previous}}' } })).id;
      await connect(flowId, up, mid);
      await connect(flowId, mid, end);
      const run = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs: { q: tag } });
      expect(run.status, run.text).to.equal(200);
      expect(run.body.status, run.text).to.equal('failed');
      expect(nodeOf(run.body, mid).error.code).to.equal('WEBHOOK_HTTP_500');
      const original = await as(alice, 'GET', `/flows/${flowId}`);
      const midNode = original.body.flow.nodes.find((n: { id: string }) => n.id === mid);
      return { flowId, up, mid, end, processId: run.body.processId as string, upOutput: nodeOf(run.body, up).output, midNode, version: run.body.flowVersion as number };
    }
    const fix = async (flowId: string, mid: string, midNode: { data: Record<string, unknown> }, path: string) => {
      const res = await as(alice, 'PUT', `/flows/${flowId}/nodes/${mid}`, { data: { ...midNode.data, webhookConfig: { url: `${base}${path}`, method: 'POST' } } });
      expect(res.status, res.text).to.equal(200);
    };

    it('replays a failed run from its failing node after a fix: completes, the upstream webhook is not called again, the new run names what it replays', async () => {
      const f = await failedRun('a');
      await fix(f.flowId, f.mid, f.midNode, '/ok-a');
      expect([count('/up-a'), count('/fail-a'), count('/ok-a')]).to.deep.equal([1, 1, 0]);

      // The fixed node is a webhook that changed: with recorded side effects nothing fits.
      const refused = await as(alice, 'POST', `/processes/${f.processId}/replay`, { fromNodeId: f.mid });
      expectError(refused, 409, 'REPLAY_NO_RECORDING');
      expect(refused.body.error.details.nodes).to.deep.equal([f.mid]);
      expect(count('/ok-a')).to.equal(0);

      const replayed = await as(alice, 'POST', `/processes/${f.processId}/replay`, { fromNodeId: f.mid, sideEffects: 'live' });
      expect(replayed.status, replayed.text).to.equal(201);
      expect(replayed.body.status, replayed.text).to.equal('completed');
      expect(replayed.body.processId).to.not.equal(f.processId);
      expect(replayed.body.replay).to.deep.equal({ of: f.processId, fromNodeId: f.mid, sideEffects: 'live', reuse: [f.up] });
      expect(nodeOf(replayed.body, f.up).output).to.deep.equal(f.upOutput);
      expect(nodeOf(replayed.body, f.up).metadata.replayedFrom).to.equal(f.processId);
      expect(nodeOf(replayed.body, f.end).output).to.include('/ok-a');
      expect([count('/up-a'), count('/fail-a'), count('/ok-a')], 'upstream not called again').to.deep.equal([1, 1, 1]);

      // The events of the new run record it too.
      const events = await as(alice, 'GET', `/processes/${replayed.body.processId}/events?limit=5`);
      expect(events.body.events[0].type).to.equal('RunRequested');
      expect(events.body.events[0].data.replay.of).to.equal(f.processId);
    });

    it('with recorded side effects calls nothing outside, also async; with an older flowVersion it runs the old graph', async () => {
      const f = await failedRun('b');
      await fix(f.flowId, f.mid, f.midNode, '/ok-b');
      const live = await as(alice, 'POST', `/processes/${f.processId}/replay`, { sideEffects: 'live' });
      expect(live.status, live.text).to.equal(201);
      expect(live.body.status).to.equal('completed');
      expect([count('/up-b'), count('/ok-b')]).to.deep.equal([2, 1]);

      const again = await as(alice, 'POST', `/processes/${live.body.processId}/replay`, { async: true });
      expect(again.status, again.text).to.equal(201);
      expect(again.body.status).to.equal('queued');
      let done: Record<string, any> = {};
      await waitUntil('the async replay to finish', async () => {
        done = (await as(alice, 'GET', `/processes/${again.body.processId}`)).body.process;
        return done?.status === 'completed' || done?.status === 'failed';
      }, 30_000);
      expect(done.status).to.equal('completed');
      expect(done.replay.reuse).to.deep.equal([f.up, f.mid]);
      expect([count('/up-b'), count('/ok-b')], 'nothing called').to.deep.equal([2, 1]);

      const old = await as(alice, 'POST', `/processes/${live.body.processId}/replay`, { flowVersion: f.version, fromNodeId: f.mid, sideEffects: 'live' });
      expect(old.status, old.text).to.equal(201);
      expect(old.body.flowVersion).to.equal(f.version);
      expect(old.body.status).to.equal('failed');
      expect(count('/fail-b')).to.equal(2);
    });

    it("refuses an unknown or another tenant's run (404), a fromNodeId not in the flow (400), a version beyond the flow (404)", async () => {
      const f = await failedRun('c');
      await client.refusedWithoutEvents(() => as(mallory, 'POST', `/processes/${f.processId}/replay`, {}), 404, 'PROCESS_NOT_FOUND');
      await client.refusedWithoutEvents(() => as(alice, 'POST', '/processes/00000000-0000-4000-8000-000000000000/replay', {}), 404, 'PROCESS_NOT_FOUND');
      await client.refusedWithoutEvents(() => as(alice, 'POST', `/processes/${f.processId}/replay`, { fromNodeId: 'nope', sideEffects: 'live' }), 400, 'VALIDATION_FAILED', 'body.fromNodeId');
      await client.refusedWithoutEvents(() => as(alice, 'POST', `/processes/${f.processId}/replay`, { flowVersion: 999 }), 404, 'VERSION_NOT_FOUND');
      expectError(await as(alice, 'POST', `/processes/${f.processId}/replay`, { sideEffects: 'sometimes' }), 400, 'VALIDATION_FAILED');
    });
  });
}
