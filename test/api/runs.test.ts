import { expect } from 'chai';
import { startFakeOpenAi } from '../support/fake-llm/index.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';

const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });
const offlineLlm = (prompt: string, extra: Record<string, unknown> = {}) => node({ nodeType: 'llm', llm: 'offline', model: 'any', prompt, ...extra });

for (const mode of availableModes()) {
  describe(`processing API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    const client = flowClient(() => svc);
    const as = (u: RegisteredUser, method: string, path: string, body?: unknown, headers?: Record<string, string>) => client.as(u, method, path, body, headers);

    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it("process one node: the seed's contract to the letter (offline provider)", async () => {
      const flowId = await client.newFlow(owner);
      const n = await client.addNode(owner, flowId, offlineLlm('Say hello to {{inputs.name}}', { conditions: [{ operator: 'contains', value: 'hello', targetNodeId: null }] }));
      const res = await as(owner, 'POST', `/flows/${flowId}/nodes/${n.id}/process`, { inputs: { name: 'Ada' }, async: false, saveToHistory: true, overrideConfig: { temperature: 0.2, maxTokens: 50, model: 'other' } });
      expect(res.status, res.text).to.equal(200);
      expect(Object.keys(res.body).sort()).to.deep.equal(['executionTime', 'nodeId', 'processId', 'result', 'success', 'timestamp']);
      expect(res.body.success).to.equal(true);
      expect(res.body.nodeId).to.equal(n.id);
      expect(res.body.result.output).to.equal('Say hello to Ada');
      expect(res.body.result.metadata.provider).to.equal('offline');
      expect(res.body.result.conditionalResults).to.deep.equal([{ condition: res.body.result.conditionalResults[0].condition, result: true, targetNodeId: null }]);
      // 4 words of prompt + 4 of output
      expect(res.body.result.usage).to.deep.equal({ total_tokens: 8, cost: 0 });
      expect(res.body.executionTime).to.be.a('number').and.at.least(0);
      expect(new Date(res.body.timestamp).toISOString()).to.equal(res.body.timestamp);
      expect(res.body.processId).to.be.a('string');

      const history = await waitUntil('history entry', async () => {
        const h = await as(owner, 'GET', `/flows/${flowId}/nodes/${n.id}/history`);
        return h.status === 200 && (h.body.items ?? h.body.history ?? []).length > 0 ? h : null;
      });
      expect(history.text).to.include(res.body.processId);

      const proc = await as(owner, 'GET', `/processes/${res.body.processId}`);
      expect(proc.status, proc.text).to.equal(200);
      expect(proc.body.process.status).to.equal('completed');
      expect(proc.body.process.nodes[0]).to.include({ nodeId: n.id, status: 'completed' });
      const events = await as(owner, 'GET', `/processes/${res.body.processId}/events`);
      expect(events.body.events.map((e: { type: string }) => e.type)).to.deep.equal(['RunRequested', 'RunStarted', 'NodeStarted', 'NodeCompleted', 'RunCompleted']);
    });

    it('GET /processes/{id} answers a run its read model does not hold yet from the run\'s own stream (a lagging projector never makes a run missing); another user still 404', async () => {
      const flowId = await client.newFlow(owner);
      const n = await client.addNode(owner, flowId, offlineLlm('lagging {{inputs.name}}'));
      const res = await as(owner, 'POST', `/flows/${flowId}/nodes/${n.id}/process`, { inputs: { name: 'Ada' } });
      expect(res.status, res.text).to.equal(200);
      // What a projector behind the log looks like to the route: no document for the run.
      await svc.services.readStore.collection('processes').deleteOne({ _id: res.body.processId });
      const proc = await as(owner, 'GET', `/processes/${res.body.processId}`);
      expect(proc.status, proc.text).to.equal(200);
      expect(proc.body.process).to.include({ processId: res.body.processId, status: 'completed' });
      expect(proc.body.process.nodes[0]).to.include({ nodeId: n.id, status: 'completed', output: 'lagging Ada' });
      expectError(await as(other, 'GET', `/processes/${res.body.processId}`), 404, 'PROCESS_NOT_FOUND');
      expectError(await as(owner, 'GET', '/processes/00000000-0000-4000-8000-000000000000'), 404, 'PROCESS_NOT_FOUND');
    });

    it('with the projector held back: an async run answers 202 at once, a sync run answers with X-Read-Model: pending after the bounded wait, and GET /processes/{id} never shows a run missing or older than its answer', async () => {
      const flowId = await client.newFlow(owner);
      const n = await client.addNode(owner, flowId, offlineLlm('held {{inputs.name}}'));
      const processes = svc.services.readStore.collection<{ _id: string; status: string; state: string }>('processes');
      await svc.services.projections.stop();
      let restarted = false;
      try {
        // A sync answer waits for its own projection (issue 38), at most READ_YOUR_WRITES_TIMEOUT_MS
        // (5 s here); with the projector stopped it answers when that ran out, and says so.
        const sync = await as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { name: 'Ada' } });
        expect(sync.status, sync.text).to.equal(200);
        expect(sync.body.status).to.equal('completed');
        expect(sync.headers.get('x-read-model')).to.equal('pending');
        const t1 = Date.now();
        const queued = await as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { name: 'Bob' }, async: true });
        expect(queued.status, queued.text).to.equal(202);
        const t2 = Date.now();
        expect(t2 - t1, '202 waited for the projector').to.be.below(2_500);
        expect(queued.headers.get('x-read-model')).to.equal(null);
        expect(await processes.findOne({ _id: sync.body.processId }), 'the projector is held back').to.equal(null);

        const proc = await as(owner, 'GET', `/processes/${sync.body.processId}`);
        expect(proc.status, proc.text).to.equal(200);
        expect(proc.body.process).to.include({ processId: sync.body.processId, status: 'completed' });
        expect(proc.body.process.nodes[0]).to.include({ nodeId: n.id, status: 'completed', output: 'held Ada' });
        // The worker reacts to the log, not to the read model: the async run completes while nothing is projected.
        const done = await waitUntil('the async run completed', async () => {
          const p = await as(owner, 'GET', `/processes/${queued.body.processId}`);
          expect(p.status, p.text).to.equal(200);
          return p.body.process.status === 'completed' ? p : null;
        }, 60_000); // Kafka delivery on a loaded machine; not a timing assertion
        expect(done.body.process.nodes[0]).to.include({ status: 'completed', output: 'held Bob' });
        expect(await processes.findOne({ _id: queued.body.processId })).to.equal(null);
        expectError(await as(other, 'GET', `/processes/${queued.body.processId}`), 404, 'PROCESS_NOT_FOUND');

        await svc.services.projections.start();
        restarted = true;
        await waitUntil('both runs projected', async () => (await as(owner, 'GET', `/flows/${flowId}/processes`)).body.items.length === 2);
        // A read model older than the answer (a document still saying running): the run's stream wins.
        const doc = (await processes.findOne({ _id: sync.body.processId }))!;
        const older = typeof doc.state === 'string' ? { state: JSON.stringify({ ...JSON.parse(doc.state), status: 'running' }) } : {};
        await processes.updateOne({ _id: sync.body.processId }, { $set: { status: 'running', ...older } });
        const again = await as(owner, 'GET', `/processes/${sync.body.processId}`);
        expect(again.body.process.status).to.equal('completed');
      } finally {
        if (!restarted) await svc.services.projections.start();
      }
    });

    it('process: 401 without credentials, 404 for unknown flow or node, 400 for unknown fields, another user 404', async () => {
      const flowId = await client.newFlow(owner);
      const n = await client.addNode(owner, flowId, offlineLlm('x'));
      expectError(await client.as({ auth: {} }, 'POST', `/flows/${flowId}/nodes/${n.id}/process`, { inputs: {} }), 401);
      expectError(await as(owner, 'POST', `/flows/nope/nodes/${n.id}/process`, { inputs: {} }), 404, 'FLOW_NOT_FOUND');
      expectError(await as(owner, 'POST', `/flows/${flowId}/nodes/nope/process`, { inputs: {} }), 404, 'NODE_NOT_FOUND');
      expectError(await as(owner, 'POST', `/flows/${flowId}/nodes/${n.id}/process`, { inputs: {}, bogus: 1 }), 400, 'VALIDATION_FAILED');
      expectError(await as(other, 'POST', `/flows/${flowId}/nodes/${n.id}/process`, { inputs: {} }), 404, 'FLOW_NOT_FOUND');
      const run = await as(owner, 'POST', `/flows/${flowId}/nodes/${n.id}/process`, { inputs: {} });
      const pid = run.body.processId;
      expectError(await as(other, 'GET', `/processes/${pid}`), 404, 'PROCESS_NOT_FOUND');
      expectError(await as(other, 'GET', `/processes/${pid}/events`), 404, 'PROCESS_NOT_FOUND');
      expectError(await as(other, 'GET', `/flows/${flowId}/status`), 404, 'FLOW_NOT_FOUND');
      expectError(await as(other, 'GET', `/flows/${flowId}/processes`), 404, 'FLOW_NOT_FOUND');
      expectError(await as(other, 'POST', `/flows/${flowId}/run`, { inputs: {} }), 404, 'FLOW_NOT_FOUND');
      expectError(await as(other, 'POST', `/flows/${flowId}/stop`), 404, 'FLOW_NOT_FOUND');
      const running = await as(other, 'GET', '/processes/running');
      expect(running.status).to.equal(200);
      expect(running.body.items).to.deep.equal([]);
    });

    it('runs a flow: a condition skips a branch; Idempotency-Key answers the first run again', async () => {
      const flowId = await client.newFlow(owner);
      const a = await client.addNode(owner, flowId, node({ nodeType: 'transform', template: 'topic {{inputs.topic}}' }));
      const yes = await client.addNode(owner, flowId, offlineLlm('yes branch: {{previous}}'), );
      const no = await client.addNode(owner, flowId, node({ nodeType: 'transform', template: 'no branch' }));
      const after = await client.addNode(owner, flowId, node({ nodeType: 'transform', template: 'after {{previous}}' }));
      await as(owner, 'PUT', `/flows/${flowId}/nodes/${a.id}`, { data: { nodeType: 'transform', template: 'topic {{inputs.topic}}', conditions: [{ operator: 'contains', value: 'cats', targetNodeId: yes.id }, { operator: 'contains', value: 'dogs', targetNodeId: no.id }] } });
      for (const [source, target] of [[a.id, yes.id], [a.id, no.id], [no.id, after.id]]) {
        const c = await as(owner, 'POST', `/flows/${flowId}/connections`, { source, target });
        expect(c.status, c.text).to.equal(201);
      }
      const headers = { 'Idempotency-Key': `k-${flowId}` };
      const res = await as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'cats' } }, headers);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.status).to.equal('completed');
      const byId = Object.fromEntries(res.body.nodes.map((x: { nodeId: string }) => [x.nodeId, x]));
      expect(byId[a.id].status).to.equal('completed');
      expect(byId[yes.id]).to.include({ status: 'completed', output: 'yes branch: topic cats' });
      expect(byId[no.id].status).to.equal('skipped');
      expect(byId[after.id].status).to.equal('skipped');
      const again = await as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'cats' } }, headers);
      expect(again.body.processId).to.equal(res.body.processId);
      // Lists are eventually consistent: a run is answered before it is projected.
      const list = await waitUntil('the run in the list', async () => {
        const l = await as(owner, 'GET', `/flows/${flowId}/processes?limit=5`);
        return l.body.items.length > 0 ? l : null;
      });
      expect(list.body.items).to.have.length(1);
    });

    it('async run: 202 queued, then completed through the worker; flow status shows it', async () => {
      const flowId = await client.newFlow(owner);
      const n = await client.addNode(owner, flowId, offlineLlm('async {{inputs.x}}'));
      const res = await as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { x: 1 }, async: true });
      expect(res.status, res.text).to.equal(202);
      expect(res.body).to.deep.equal({ success: true, processId: res.body.processId, status: 'queued' });
      const done = await waitUntil('completed', async () => {
        const p = await as(owner, 'GET', `/processes/${res.body.processId}`);
        return p.body.process?.status === 'completed' ? p : null;
      });
      expect(done.body.process.nodes[0]).to.include({ nodeId: n.id, output: 'async 1' });
      const status = await waitUntil('the flow status to show it', async () => {
        const st = await as(owner, 'GET', `/flows/${flowId}/status`);
        return st.body.status === 'completed' ? st : null;
      });
      expect(status.body.process.processId).to.equal(res.body.processId);
      const asyncNode = await as(owner, 'POST', `/flows/${flowId}/nodes/${n.id}/process`, { inputs: {}, async: true });
      expect(asyncNode.status).to.equal(202);
      expect(asyncNode.body.status).to.equal('queued');
    });

    it('stop: a running run (delay node) stops, and GET /processes/running lists it while it runs', async () => {
      const flowId = await client.newFlow(owner);
      const d = await client.addNode(owner, flowId, node({ nodeType: 'delay', delayMs: 20_000 }));
      const t = await client.addNode(owner, flowId, node({ nodeType: 'transform', template: 'late' }));
      await as(owner, 'POST', `/flows/${flowId}/connections`, { source: d.id, target: t.id });
      const res = await as(owner, 'POST', `/flows/${flowId}/run`, { inputs: {}, async: true });
      expect(res.status).to.equal(202);
      await waitUntil('running', async () => {
        const p = await as(owner, 'GET', `/processes/${res.body.processId}`);
        return p.body.process?.nodes[0].status === 'running' ? p : null;
      });
      const running = await waitUntil('the running list to show it', async () => {
        const r = await as(owner, 'GET', '/processes/running');
        return r.body.items.some((p: { processId: string }) => p.processId === res.body.processId) ? r : null;
      });
      expect(running.body.items.map((p: { processId: string }) => p.processId)).to.include(res.body.processId);
      const started = Date.now();
      const stop = await as(owner, 'POST', `/flows/${flowId}/stop`);
      expect(stop.status, stop.text).to.equal(200);
      expect(stop.body.stopped).to.deep.equal([res.body.processId]);
      const stopped = await waitUntil('stopped', async () => {
        const p = await as(owner, 'GET', `/processes/${res.body.processId}`);
        return p.body.process?.status === 'stopped' ? p : null;
      });
      expect(Date.now() - started).to.be.below(10_000);
      expect(stopped.body.process.nodes[1].status).to.equal('pending');
      expectError(await as(owner, 'POST', `/flows/${flowId}/stop`), 409, 'NO_RUNNING_PROCESS');
    });
  });

  describe(`processing API, provider failure (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let fake: Awaited<ReturnType<typeof startFakeOpenAi>>;
    before(async () => {
      fake = await startFakeOpenAi();
      fake.failures = Array.from({ length: 10 }, () => ({ status: 500 }));
      svc = await startTestService(mode, { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test', LLM_MAX_RETRIES: '0' });
    });
    after(async () => {
      await svc?.stop();
      await fake?.close();
    });

    it('500 with the error body and NodeFailed recorded with the provider error', async () => {
      const client = flowClient(() => svc);
      const owner = await registerUser(svc.baseUrl);
      const flowId = await client.newFlow(owner);
      const n = await client.addNode(owner, flowId, node({ nodeType: 'llm', llm: 'openai', model: 'gpt-4o-mini', prompt: 'hi' }));
      const res = await client.as(owner, 'POST', `/flows/${flowId}/nodes/${n.id}/process`, { inputs: {} });
      expect(res.status, res.text).to.equal(500);
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.match(/^PROVIDER_/);
      const pid = res.body.error.details.processId;
      const events = await client.as(owner, 'GET', `/processes/${pid}/events`);
      const failed = events.body.events.find((e: { type: string }) => e.type === 'NodeFailed');
      expect(failed.data.error.provider).to.equal('openai');
      expect(events.body.events.map((e: { type: string }) => e.type)).to.include('RunFailed');
    });
  });
}
