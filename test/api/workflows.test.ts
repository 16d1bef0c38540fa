import { expect } from 'chai';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { TestClock } from '../support/clock.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';
import { answer } from '../support/api-client.js';
import type { RequestBody } from '../../client/index.js';

/** Workflows over HTTP (issue 13): create/start, signals, timers, pause/resume, cancel/terminate, queries, history, search. */
const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });

for (const mode of availableModes()) {
  describe(`workflows API (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    // Durable timers come due on this clock: a test moves it past a timer instead of sleeping.
    const clock = new TestClock();
    const client = flowClient(() => svc);

    before(async () => {
      svc = await startTestService(mode, {}, { clock });
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
    });

    /** A flow of the given nodes chained in order; returns the flow id and the node ids. */
    async function chainFlow(datas: Array<Record<string, unknown>>) {
      const flowId = await client.newFlow(owner);
      const ids: string[] = [];
      for (const [i, data] of datas.entries()) ids.push((await client.addNode(owner, flowId, node(data, i * 100))).id);
      for (let i = 1; i < ids.length; i++) {
        const res = await answer(client.api(owner).POST('/flows/{flowId}/connections', { params: { path: { flowId } }, body: { source: ids[i - 1], target: ids[i] } }));
        expect(res.status, res.text).to.equal(201);
      }
      return { flowId, ids };
    }
    const get = async (id: string) => (await answer(client.api(owner).GET('/workflows/{workflowId}', { params: { path: { workflowId: id } } }))).body.workflow;
    const until = (id: string, status: string, ms = 20_000) =>
      waitUntil(`workflow ${id} ${status}`, async () => {
        const wf = await get(id);
        return wf?.status === status ? wf : null;
      }, ms);
    const create = async (body: RequestBody<'createWorkflow'>) => {
      const res = await answer(client.api(owner).POST('/workflows', { body }));
      expect(res.status, res.text).to.equal(201);
      return res.body.workflow;
    };

    it('runs set_state, waits for a signal (query with no worker involved), sleeps on a durable timer, runs a transform and completes', async () => {
      const { flowId } = await chainFlow([
        { nodeType: 'set_state', values: { stage: 'waiting', customer: '{{inputs.customer}}' } },
        { nodeType: 'wait_signal', signalName: 'approve' },
        { nodeType: 'sleep', durationMs: 300 },
        { nodeType: 'transform', template: 'approved for {{inputs.customer}}' },
      ]);
      const wf = await create({ flowId, input: { customer: 'ACME' }, searchAttributes: { tier: 'gold', amount: 42 } });
      expect(wf.status).to.equal('RUNNING');
      expect(wf.state).to.deep.equal({ stage: 'waiting', customer: 'ACME' });
      expect(wf.waitingOn).to.deep.include({ kind: 'signal', name: 'approve' });
      const q = await answer(client.api(owner).POST('/workflows/{workflowId}/query', { params: { path: { workflowId: wf.id } }, body: { name: 'customer' } }));
      expect(q.status, q.text).to.equal(200);
      expect(q.body.result).to.equal('ACME');
      expectError(await answer(client.api(owner).POST('/workflows/{workflowId}/query', { params: { path: { workflowId: wf.id } }, body: { name: 'nothing' } })), 404, 'QUERY_NOT_FOUND');

      const sig = await answer(client.api(owner).POST('/workflows/{workflowId}/signal', { params: { path: { workflowId: wf.id } }, body: { name: 'approve', payload: { by: 'boss' }, requestId: 'req-1' } }));
      expect(sig.status, sig.text).to.equal(202);
      expect(sig.body.recorded).to.equal(true);
      const again = await answer(client.api(owner).POST('/workflows/{workflowId}/signal', { params: { path: { workflowId: wf.id } }, body: { name: 'approve', payload: { by: 'boss' }, requestId: 'req-1' } }));
      expect(again.body.recorded).to.equal(false);
      const done = await until(wf.id, 'COMPLETED');
      expect(done.result).to.equal('approved for ACME');
      expect(done.nodes[1].output).to.deep.equal({ by: 'boss' });
      expect(done.pendingSignals).to.deep.equal([]);
      const timers = (await answer(client.api(owner).GET('/workflows/{workflowId}/timers', { params: { path: { workflowId: wf.id } } }))).body.timers;
      expect(timers.map((t: { kind: string; status: string }) => [t.kind, t.status])).to.deep.equal([['sleep', 'fired']]);
      const history = (await answer(client.api(owner).GET('/workflows/{workflowId}/history', { params: { path: { workflowId: wf.id } } }))).body;
      expect(history.events.filter((e: { type: string }) => e.type === 'SignalReceived')).to.have.length(1);
      expect(history.events.filter((e: { type: string }) => e.type === 'TimerFired')).to.have.length(1);
      expect(history.events.at(-1).type).to.equal('WorkflowCompleted');
      // A closed workflow still answers queries, refuses signals.
      expect((await answer(client.api(owner).POST('/workflows/{workflowId}/query', { params: { path: { workflowId: wf.id } }, body: { name: 'status' } }))).body.result.status).to.equal('COMPLETED');
      expectError(await answer(client.api(owner).POST('/workflows/{workflowId}/signal', { params: { path: { workflowId: wf.id } }, body: { name: 'approve' } })), 409, 'WORKFLOW_CLOSED');
    });

    it('start: false, then __start; history long-polls until the next event', async () => {
      const { flowId } = await chainFlow([{ nodeType: 'wait_signal', signalName: 'go' }]);
      const wf = await create({ flowId, workflowId: `wf-start-${mode}`, start: false });
      expect(wf.status).to.equal('CREATED');
      expectError(await answer(client.api(owner).POST('/workflows', { body: { flowId, workflowId: wf.id } })), 409, 'WORKFLOW_ALREADY_STARTED');
      const head = (await answer(client.api(owner).GET('/workflows/{workflowId}/history', { params: { path: { workflowId: wf.id } } }))).body.lastEventId;
      const waiters = svc.services.streamSignals.waiting;
      const poll = client.as(owner, 'GET', `/workflows/${wf.id}/history?afterEventId=${head}&wait=true&waitMs=10000`);
      await waitUntil('the history long poll to wait on the stream', async () => svc.services.streamSignals.waiting > waiters, 5_000);
      const start = await answer(client.api(owner).POST('/workflows/{workflowId}/signal', { params: { path: { workflowId: wf.id } }, body: { name: '__start' } }));
      expect(start.status, start.text).to.equal(202);
      const polled = await poll;
      expect(polled.status, polled.text).to.equal(200);
      expect(polled.body.events[0]).to.deep.include({ eventId: head + 1, type: 'WorkflowStarted' });
      const quiet = await client.as(owner, 'GET', `/workflows/${wf.id}/history?afterEventId=999&wait=true&waitMs=200`);
      expect(quiet.body.events).to.deep.equal([]);
      await answer(client.api(owner).POST('/workflows/{workflowId}/signal', { params: { path: { workflowId: wf.id } }, body: { name: 'go', payload: 7 } }));
      expect((await until(wf.id, 'COMPLETED')).result).to.equal(7);
    });

    it('pause holds timers and nodes; resume fires what came due; user timers deliver signals and can be canceled', async () => {
      // Ten minutes on the test clock: due only when the test moves the clock, so the pause surely lands first.
      const sleepMs = 10 * 60_000;
      const { flowId } = await chainFlow([{ nodeType: 'sleep', durationMs: sleepMs }, { nodeType: 'wait_signal', signalName: 'tick' }]);
      const wf = await create({ flowId });
      const paused = await answer(client.api(owner).POST('/workflows/{workflowId}/pause', { params: { path: { workflowId: wf.id } }, body: { reason: 'inspect' } }));
      expect(paused.status, paused.text).to.equal(200);
      expect(paused.body.workflow.status).to.equal('PAUSED');
      expectError(await answer(client.api(owner).POST('/workflows/{workflowId}/pause', { params: { path: { workflowId: wf.id } }, body: {} })), 409, 'WORKFLOW_NOT_RUNNING');
      // The sleep comes due while paused; a scan arms it and its timeout tries to fire it (held drops back to 0).
      clock.advance(sleepMs + 60_000);
      await waitUntil('a timer scan to arm the due sleep', async () => (await svc.services.workflowTimers.scan()) > 0, 10_000);
      await waitUntil('the armed sleep to try to fire', async () => svc.services.workflowTimers.held === 0, 10_000);
      expect((await get(wf.id)).timers[0].status, 'no timer fires while paused').to.equal('pending');
      const resumed = await answer(client.api(owner).POST('/workflows/{workflowId}/resume', { params: { path: { workflowId: wf.id } }, body: { reason: 'go on' } }));
      expect(resumed.status, resumed.text).to.equal(200);
      expect(resumed.body.workflow.timers[0].status).to.equal('fired');
      expect(resumed.body.workflow.waitingOn).to.deep.include({ kind: 'signal', name: 'tick' });
      const log = (await answer(client.api(owner).GET('/workflows/{workflowId}/history', { params: { path: { workflowId: wf.id } } }))).body.events.map((e: { type: string }) => e.type);
      expect(log.filter((t: string) => t === 'TimerFired'), 'fired once').to.have.length(1);
      expect(log.indexOf('TimerFired'), 'fired by the resume, not while paused').to.be.above(log.indexOf('WorkflowResumed'));
      expectError(await answer(client.api(owner).POST('/workflows/{workflowId}/resume', { params: { path: { workflowId: wf.id } }, body: {} })), 409, 'WORKFLOW_NOT_PAUSED');

      const later = await answer(client.api(owner).POST('/workflows/{workflowId}/timers', { params: { path: { workflowId: wf.id } }, body: { name: 'never', delayMs: 3_600_000 } }));
      expect(later.status, later.text).to.equal(201);
      const canceled = await answer(client.api(owner).DELETE('/workflows/{workflowId}/timers/{timerId}', { params: { path: { workflowId: wf.id, timerId: later.body.timer.timerId } } }));
      expect(canceled.status, canceled.text).to.equal(200);
      expect(canceled.body.timer.status).to.equal('canceled');
      const soon = await answer(client.api(owner).POST('/workflows/{workflowId}/timers', { params: { path: { workflowId: wf.id } }, body: { name: 'nudge', delayMs: 150, signal: { name: 'tick', payload: 'from timer' } } }));
      expect(soon.status, soon.text).to.equal(201);
      const done = await until(wf.id, 'COMPLETED');
      expect(done.result).to.equal('from timer');
      expectError(await answer(client.api(owner).DELETE('/workflows/{workflowId}/timers/{timerId}', { params: { path: { workflowId: wf.id, timerId: soon.body.timer.timerId } } })), 409, 'TIMER_ALREADY_FIRED');
    });

    it('cancel aborts an in-flight node through the stop path and ends CANCELED; terminate ends at once', async () => {
      const { flowId } = await chainFlow([{ nodeType: 'delay', delayMs: 20_000 }, { nodeType: 'transform', template: 'never' }]);
      const wf = await create({ flowId });
      await waitUntil('the delay node in flight', async () => (await get(wf.id)).nodes[0].status === 'running');
      const began = Date.now();
      const res = await answer(client.api(owner).POST('/workflows/{workflowId}/cancel', { params: { path: { workflowId: wf.id } }, body: { reason: 'changed my mind' } }));
      expect(res.status, res.text).to.equal(202);
      const done = await until(wf.id, 'CANCELED');
      expect(Date.now() - began, 'the delay was aborted, not waited out').to.be.below(10_000);
      expect(done.error).to.deep.include({ code: 'CANCELED', message: 'changed my mind' });
      expect(done.nodes[0].error.code).to.equal('ABORTED');

      const { flowId: f2 } = await chainFlow([{ nodeType: 'wait_signal', signalName: 'x' }]);
      const wf2 = await create({ flowId: f2 });
      const term = await answer(client.api(owner).POST('/workflows/{workflowId}/cancel', { params: { path: { workflowId: wf2.id } }, body: { terminate: true, reason: 'now' } }));
      expect(term.body.workflow.status).to.equal('TERMINATED');
      expectError(await answer(client.api(owner).POST('/workflows/{workflowId}/cancel', { params: { path: { workflowId: wf2.id } }, body: {} })), 409, 'WORKFLOW_CLOSED');
    });

    it('lists and searches from the projection; another tenant gets 404; bad input is 400 with codes', async () => {
      const { flowId } = await chainFlow([{ nodeType: 'wait_signal', signalName: 'x' }]);
      const a = await create({ flowId, workflowId: `order-a-${mode}`, searchAttributes: { region: 'eu', amount: 10 } });
      await create({ flowId, workflowId: `order-b-${mode}`, searchAttributes: { region: 'us', amount: 50 } });
      const list = await client.as(owner, 'GET', `/workflows?flowId=${flowId}&status=RUNNING&limit=1`);
      expect(list.status, list.text).to.equal(200);
      expect(list.body.items).to.have.length(1);
      expect(list.body.nextCursor).to.be.a('string');
      const search = await client.as(owner, 'GET', `/workflows/search?query=${encodeURIComponent(`WorkflowId STARTS_WITH 'order-' AND region = 'eu' AND amount BETWEEN 5 AND 20 AND ExecutionStatus IN ('Running')`)}`);
      expect(search.status, search.text).to.equal(200);
      expect(search.body.items.map((w: { id: string }) => w.id)).to.deep.equal([a.id]);
      const bad = await client.as(owner, 'GET', `/workflows/search?query=${encodeURIComponent('region = ')}`);
      expectError(bad, 400, 'INVALID_QUERY');
      expect(bad.body.error.details.position).to.equal(9);
      const theirs = await client.as(other, 'GET', '/workflows/search?query=' + encodeURIComponent(`WorkflowId = '${a.id}'`));
      expect(theirs.body.items).to.deep.equal([]);

      expectError(await answer(client.api(other).GET('/workflows/{workflowId}', { params: { path: { workflowId: a.id } } })), 404, 'WORKFLOW_NOT_FOUND');
      expectError(await answer(client.api(other).POST('/workflows/{workflowId}/signal', { params: { path: { workflowId: a.id } }, body: { name: 'x' } })), 404, 'WORKFLOW_NOT_FOUND');
      expectError(await answer(client.api(other).POST('/workflows/{workflowId}/query', { params: { path: { workflowId: a.id } }, body: { name: 'state' } })), 404, 'WORKFLOW_NOT_FOUND');
      expectError(await answer(client.api(other).POST('/workflows', { body: { flowId } })), 404, 'FLOW_NOT_FOUND');
      expectError(await client.as(owner, 'POST', '/workflows', { flowId, idempotencyPolicy: 'maybe' }), 400, 'VALIDATION_FAILED', 'body.idempotencyPolicy');
      expectError(await client.as(owner, 'POST', '/workflows', { flowId, searchAttributes: { 'a.b': 1 } }), 400, 'VALIDATION_FAILED');
      expectError(await client.as(owner, 'POST', `/workflows/${a.id}/timers`, { name: 't' }), 400, 'VALIDATION_FAILED', 'body.fireAt');
      expectError(await client.as(owner, 'POST', `/workflows/${a.id}/signal`, {}), 400, 'VALIDATION_FAILED', 'body.name');
      expectError(await client.as(owner, 'GET', `/workflows/${a.id}/history?limit=0`), 400, 'VALIDATION_FAILED', 'query.limit');
    });

    it('continue-as-new closes the execution and starts a fresh one carrying the state, linked both ways', async () => {
      const { flowId } = await chainFlow([{ nodeType: 'set_state', values: { count: 1 } }, { nodeType: 'wait_signal', signalName: 'x' }]);
      const wf = await create({ flowId });
      const res = await answer(client.api(owner).POST('/workflows/{workflowId}/continue-as-new', { params: { path: { workflowId: wf.id } }, body: {} }));
      expect(res.status, res.text).to.equal(201);
      expect(res.body.previous).to.deep.include({ status: 'COMPLETED', continuedAs: res.body.workflow.id });
      expect(res.body.workflow).to.deep.include({ continuedFrom: wf.id, status: 'RUNNING' });
      expect(res.body.workflow.state).to.deep.equal({ count: 1 });
    });

    it("a local node's start and end are one append (issue 29); the workflow's history keeps both events", async () => {
      const { flowId } = await chainFlow([{ nodeType: 'transform', template: 'first' }, { nodeType: 'wait_signal', signalName: 'go' }, { nodeType: 'transform', template: 'done' }]);
      // Counted, not replaced: every append still goes to the store.
      const store = svc.services.eventStore;
      const appends: Array<{ streamId: string; types: string[] }> = [];
      const append = store.append;
      store.append = async function (this: typeof store, streamId, events, expected) {
        appends.push({ streamId, types: events.map((e) => e.type) });
        return append.call(this, streamId, events, expected);
      };
      try {
        const wf = await create({ flowId });
        await waitUntil('waiting on its signal', async () => (await get(wf.id)).waitingOn?.kind === 'signal');
        const signal = await answer(client.api(owner).POST('/workflows/{workflowId}/signal', { params: { path: { workflowId: wf.id } }, body: { name: 'go' } }));
        expect(signal.status, signal.text).to.equal(202);
        const done = await until(wf.id, 'COMPLETED');
        expect(done.result).to.equal('done');
        const mine = appends.filter((a) => a.streamId === `workflow-${wf.id}`);
        // Before: a start alone, then the end, for each transform (six appends).
        expect(mine.map((a) => a.types)).to.deep.equal([
          ['WorkflowCreated', 'WorkflowStarted'],
          ['WorkflowNodeStarted', 'WorkflowNodeCompleted', 'WorkflowNodeStarted'], // the transform, then wait_signal begins
          ['SignalReceived', 'SignalDelivered', 'WorkflowNodeCompleted'],
          ['WorkflowNodeStarted', 'WorkflowNodeCompleted', 'WorkflowCompleted'],
        ]);
      } finally {
        store.append = append;
      }
    });

    it('wait_signal, sleep and set_state are listed in GET /node-types', async () => {
      const res = await answer(client.api(owner).GET('/node-types'));
      const types = (res.body.nodeTypes ?? res.body.items ?? res.body).map((t: { nodeType: string }) => t.nodeType);
      expect(types).to.include.members(['wait_signal', 'sleep', 'set_state']);
    });
  });
}
