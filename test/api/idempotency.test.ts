/**
 * Idempotency-Key under concurrency: the key is claimed in a reservation stream, so identical
 * requests fired at the same instant start exactly one run and all answer it; the key is per user;
 * after 24 h it starts a new run; a request that fails before its run exists gives the key back.
 */
import { expect } from 'chai';
import { startRun } from '../../api/routes/runs.js';
import { idempotencyHolder } from '../../commands/runs.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';

const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });

for (const mode of availableModes()) {
  describe(`Idempotency-Key (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    const client = flowClient(() => svc);

    /** Runs requested for the flow, from the log (the truth, never behind). */
    async function runsOf(flowId: string): Promise<string[]> {
      const streams: string[] = [];
      for (let after = 0; ; ) {
        const events = await svc.services.eventStore.readAll({ categories: ['run'], after, maxCount: 1000 });
        if (events.length === 0) return streams;
        for (const e of events) if (e.type === 'RunRequested' && (e.data as { flowId: string }).flowId === flowId) streams.push(e.streamId);
        after = events[events.length - 1].position;
      }
    }

    /** A flow slow enough (a delay node) that concurrent requests really overlap its run. */
    async function slowFlow(user: RegisteredUser): Promise<{ flowId: string; last: string }> {
      const flowId = await client.newFlow(user);
      const d = await client.addNode(user, flowId, node({ nodeType: 'delay', delayMs: 300 }));
      const t = await client.addNode(user, flowId, node({ nodeType: 'transform', template: 'done {{inputs.x}}' }, 1));
      const c = await client.as(user, 'POST', `/flows/${flowId}/connections`, { source: d.id, target: t.id });
      expect(c.status, c.text).to.equal(201);
      return { flowId, last: t.id };
    }

    /** startRun without HTTP: calls made in the same tick overlap for sure (over HTTP the event loop may serialize them). */
    function direct(userId: string, key: string) {
      const input = () =>
        ({
          services: svc.services,
          principal: { userId },
          koa: { get: (h: string) => (h === 'idempotency-key' ? key : '') },
          command: { actorId: userId, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, now: new Date() },
          settle: async () => undefined,
        }) as unknown as Parameters<typeof startRun>[0];
      const request = (flowId: string) => ({ flowId, mode: 'flow' as const, inputs: {}, async: false, requestedBy: userId, source: 'api', scope: { userId, orgId: null, workspaceId: null } });
      return { input, request };
    }

    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it('two identical sync requests at the same instant: one run, both answers carry it and its result', async () => {
      const { flowId, last } = await slowFlow(owner);
      const headers = { 'Idempotency-Key': `same-${flowId}` };
      const send = () => client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { x: 1 } }, headers);
      const answers = await Promise.all([send(), send(), send()]);
      for (const res of answers) {
        expect(res.status, res.text).to.equal(200);
        expect(res.body.status, res.text).to.equal('completed');
        expect(res.body.processId).to.equal(answers[0].body.processId);
        expect(res.body.nodes.find((n: { nodeId: string }) => n.nodeId === last).output).to.equal('done 1');
      }
      expect(await runsOf(flowId)).to.deep.equal([`run-${answers[0].body.processId}`]);
    });

    it('five startRun calls in the same tick with one key: exactly one run, all answer it', async () => {
      const { flowId } = await slowFlow(owner);
      const { input, request } = direct(owner.user.id, `tick-${flowId}`);
      const all = await Promise.all([1, 2, 3, 4, 5].map((i) => startRun(input(), request(flowId))));
      expect(new Set(all.map((r) => r.processId)).size).to.equal(1);
      expect(all.filter((r) => r.state?.status === 'completed')).to.have.length(1);
      expect(all.filter((r) => r.repeated?.status === 'completed')).to.have.length(4);
      expect(await runsOf(flowId)).to.deep.equal([`run-${all[0].processId}`]);
    });

    it('the same key: async requests at the same instant share one queued run; another user gets its own run', async () => {
      const flowId = await client.newFlow(owner);
      await client.addNode(owner, flowId, node({ nodeType: 'transform', template: 'x' }));
      const key = `shared-${flowId}`;
      const send = (u: RegisteredUser) => client.as(u, 'POST', `/flows/${flowId}/run`, { inputs: {}, async: true }, { 'Idempotency-Key': key });
      const [a, b] = await Promise.all([send(owner), send(owner)]);
      expect(a.status, a.text).to.equal(202);
      expect(b.status, b.text).to.equal(202);
      expect(b.body.processId).to.equal(a.body.processId);
      expect(await runsOf(flowId)).to.have.length(1);

      // Same key, another user, on a flow of their own: the key is per user.
      const otherFlow = await client.newFlow(other);
      await client.addNode(other, otherFlow, node({ nodeType: 'transform', template: 'y' }));
      const [c, d] = await Promise.all([
        client.as(other, 'POST', `/flows/${otherFlow}/run`, { inputs: {} }, { 'Idempotency-Key': key }),
        client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: {} }, { 'Idempotency-Key': key }),
      ]);
      expect(c.status, c.text).to.equal(200);
      expect(c.body.processId).to.not.equal(a.body.processId);
      expect(await runsOf(otherFlow)).to.deep.equal([`run-${c.body.processId}`]);
      expect(d.body.processId).to.equal(a.body.processId);
      expect(await runsOf(flowId)).to.have.length(1);
    });

    it('process-node requests: concurrent duplicates answer the same node result', async () => {
      const flowId = await client.newFlow(owner);
      const n = await client.addNode(owner, flowId, node({ nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'hi {{inputs.who}}' }));
      const send = () => client.as(owner, 'POST', `/flows/${flowId}/nodes/${n.id}/process`, { inputs: { who: 'you' } }, { 'Idempotency-Key': `node-${flowId}` });
      const [a, b] = await Promise.all([send(), send()]);
      expect(a.status, a.text).to.equal(200);
      expect(b.status, b.text).to.equal(200);
      expect(b.body.processId).to.equal(a.body.processId);
      expect(b.body.result.output).to.equal('hi you');
      expect(await runsOf(flowId)).to.have.length(1);
    });

    it('after 24 h the key starts a new run', async () => {
      const flowId = await client.newFlow(owner);
      await client.addNode(owner, flowId, node({ nodeType: 'transform', template: 'x' }));
      const headers = { 'Idempotency-Key': `old-${flowId}` };
      const first = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: {} }, headers);
      expect(first.status, first.text).to.equal(200);
      const realNow = svc.services.now;
      try {
        svc.services.now = () => new Date(Date.now() + 23 * 3600_000);
        const within = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: {} }, headers);
        expect(within.body.processId).to.equal(first.body.processId);
        svc.services.now = () => new Date(Date.now() + 25 * 3600_000);
        const [later, again] = await Promise.all([
          client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: {} }, headers),
          client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: {} }, headers),
        ]);
        expect(later.status, later.text).to.equal(200);
        expect(later.body.processId).to.not.equal(first.body.processId);
        expect(again.body.processId, 'replacing the stale claim is itself race-free').to.equal(later.body.processId);
      } finally {
        svc.services.now = realNow;
      }
      expect(await runsOf(flowId)).to.have.length(2);
    });

    it('a request refused before its run exists gives the key back; a malformed key is 400', async () => {
      const flowId = await client.newFlow(owner);
      await client.addNode(owner, flowId, node({ nodeType: 'transform', template: 'ok' }));
      const key = `retry-${flowId}`;
      const userId = owner.user.id;
      const { input, request } = direct(userId, key);
      // Straight into startRun: requestRun refuses a flow that the route's own check would have caught,
      // which is the window (flow deleted meanwhile) this path exists for.
      let refused: unknown = null;
      await startRun(input(), request('no-such-flow')).catch((err) => (refused = err));
      expect((refused as { code?: string })?.code).to.equal('FLOW_NOT_FOUND');
      expect(await idempotencyHolder(svc.services.eventStore, userId, key), 'the key was given back').to.equal(null);
      const started = await startRun(input(), request(flowId));
      expect(started.state?.status).to.equal('completed');
      expect(await runsOf(flowId)).to.deep.equal([`run-${started.processId}`]);

      expectError(await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: {} }, { 'Idempotency-Key': 'bad key with spaces' }), 400, 'VALIDATION_FAILED', 'headers.idempotency-key');
    });
  });
}
