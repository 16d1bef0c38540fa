import { expect } from 'chai';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { readSse } from '../support/sse-client.js';
import { ApiClient } from '../../cli/lib/api.js';
import type { RunEvent } from '../../cli/lib/run-events.js';
import { streamRunEvents } from '../../cli/lib/run-stream.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';

/**
 * Issue 34 item 4: runs and workflows live. GET /processes/{id}/stream and
 * GET /workflows/{id}/stream send every event as it is appended, end after the final one, and a
 * client that reconnects with Last-Event-ID gets exactly what it missed, from the log.
 */
const node = (data: Record<string, unknown>, x: number) => ({ type: 'custom', position: { x, y: 0 }, data });

for (const mode of availableModes()) {
  describe(`live runs and workflows over SSE (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let mallory: RegisteredUser;
    const client = flowClient(() => svc);
    const { as } = client;

    before(async () => {
      svc = await startTestService(mode);
      alice = await registerUser(svc.baseUrl);
      mallory = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
    });

    const stream = (path: string, user: RegisteredUser, headers: Record<string, string> = {}, until?: (e: { event: string; data: any }) => boolean) =>
      readSse(`${svc.baseUrl}${path}`, { headers: { ...user.auth, ...headers } }, until);

    /** input → delay 300 ms → transform: slow enough to watch. */
    async function slowFlow() {
      const flowId = await client.newFlow(alice);
      const a = (await client.addNode(alice, flowId, node({ nodeType: 'transform', template: 'hi {{inputs.q}}' }, 0))).id;
      const b = (await client.addNode(alice, flowId, node({ nodeType: 'delay', delayMs: 300 }, 200))).id;
      const c = (await client.addNode(alice, flowId, node({ nodeType: 'transform', template: '{{previous}}!' }, 400))).id;
      for (const [source, target] of [[a, b], [b, c]]) expect((await as(alice, 'POST', `/flows/${flowId}/connections`, { source, target })).status).to.equal(201);
      return { flowId, a, b, c };
    }

    it('streams an async run as it happens, in log order, ending after run.completed; the frames are the run\'s events', async () => {
      const { flowId, c } = await slowFlow();
      const started = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs: { q: 'there' }, async: true });
      expect(started.status, started.text).to.equal(202);
      const live = await stream(`/processes/${started.body.processId}/stream`, alice);
      expect(live.status).to.equal(200);
      expect(live.headers.get('content-type')).to.match(/^text\/event-stream/);
      const frames = live.events.filter((e) => e.event !== 'ping');
      expect(frames[0].event).to.equal('run.requested');
      expect(frames[frames.length - 1].event).to.equal('run.completed');
      expect(frames.map((f) => f.event)).to.include.members(['run.started', 'node.started', 'node.completed']);
      const completedC = frames.find((f) => f.event === 'node.completed' && f.data.data.nodeId === c)!;
      expect(completedC.data.data.output).to.equal('hi there!');

      const listed = await as(alice, 'GET', `/processes/${started.body.processId}/events?limit=100`);
      expect(frames.map((f) => [Number(f.id), f.data.type, f.data.revision])).to.deep.equal(listed.body.events.map((e: { type: string; revision: number }) => [e.revision, e.type, e.revision]));
    });

    it('a client that drops and comes back with Last-Event-ID gets the rest: nothing lost, nothing twice', async () => {
      const { flowId } = await slowFlow();
      const started = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs: { q: 'x' }, async: true });
      const first = await stream(`/processes/${started.body.processId}/stream`, alice, {}, (e) => e.event === 'node.completed');
      const seen = first.events.filter((e) => e.id !== null);
      const lastId = seen[seen.length - 1].id!;
      const rest = await stream(`/processes/${started.body.processId}/stream`, alice, { 'Last-Event-ID': lastId });
      const more = rest.events.filter((e) => e.id !== null);
      expect(more[0] && Number(more[0].id)).to.equal(Number(lastId) + 1);
      const ids = [...seen, ...more].map((e) => Number(e.id));
      expect(ids).to.deep.equal(ids.map((_, i) => i));
      expect(more[more.length - 1].event).to.equal('run.completed');
      // Resumed after the final event: the stream ends at once, with nothing.
      const after = await stream(`/processes/${started.body.processId}/stream?lastEventId=${more[more.length - 1].id}`, alice);
      expect(after.events.filter((e) => e.id !== null)).to.deep.equal([]);
    });

    it("flowctl's reader (cli/lib/run-stream.ts) follows the live stream from a revision to the final event", async () => {
      const { flowId } = await slowFlow();
      const started = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs: { q: 'cli' }, async: true });
      const api = new ApiClient(svc.baseUrl.replace(/\/api$/, ''), alice.token);
      const seen: Array<RunEvent | 'unsupported'> = [];
      for await (const event of streamRunEvents(api, started.body.processId, { fromRevision: 1, isFinal: (e) => e.type === 'RunCompleted' })) seen.push(event);
      expect(seen).to.not.include('unsupported');
      const events = seen as RunEvent[];
      expect(events[0].revision).to.equal(1);
      expect(events.map((e) => e.revision)).to.deep.equal(events.map((_, i) => i + 1));
      expect(events[events.length - 1].type).to.equal('RunCompleted');
    });

    it("answers 404 for another tenant's run and 400 for a Last-Event-ID that is no revision", async () => {
      const { flowId } = await slowFlow();
      const run = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs: {} });
      expectError(await as(mallory, 'GET', `/processes/${run.body.processId}/stream`), 404, 'PROCESS_NOT_FOUND');
      expectError(await as(alice, 'GET', `/processes/${run.body.processId}/stream`, undefined, { 'Last-Event-ID': 'abc' }), 400, 'VALIDATION_FAILED');
    });

    it('streams a workflow: waiting, then the signal, then workflow.completed', async () => {
      const flowId = await client.newFlow(alice);
      await client.addNode(alice, flowId, node({ nodeType: 'wait_signal', signalName: 'go' }, 0));
      const created = await as(alice, 'POST', '/workflows', { flowId, input: {} });
      expect(created.status, created.text).to.equal(201);
      const id = created.body.workflow.id;
      const live = stream(`/workflows/${id}/stream`, alice);
      // Once the stream shows the workflow waiting, the signal ends it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const signalled = await as(alice, 'POST', `/workflows/${id}/signal`, { name: 'go', payload: { ok: true } });
      expect(signalled.status, signalled.text).to.equal(202);
      const frames = (await live).events.filter((e) => e.id !== null);
      expect(frames[0].event).to.equal('workflow.created');
      expect(frames.map((f) => f.event)).to.include('signal.received');
      expect(frames[frames.length - 1].event).to.equal('workflow.completed');
      expect(frames.map((f) => Number(f.id))).to.deep.equal(frames.map((_, i) => i));
      expectError(await as(mallory, 'GET', `/workflows/${id}/stream`), 404, 'WORKFLOW_NOT_FOUND');
    });
  });
}
