import { expect } from 'chai';
import { mkdtempSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { expectError } from './flows-support.js';
import { readSse } from '../support/sse-client.js';

interface Frame {
  event: string;
  data: any;
}

/** POSTs and reads the Server-Sent Events answer; `onFrame` sees each frame as it arrives. */
async function postSse(url: string, body: unknown, headers: Record<string, string>, onFrame: (frame: Frame, all: Frame[]) => void = () => {}, timeoutMs = 15_000) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const frames: Frame[] = [];
  try {
    const res = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: abort.signal });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const frame: Frame = { event: 'message', data: null };
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) frame.event = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (!data) continue;
        frame.data = JSON.parse(data);
        frames.push(frame);
        onFrame(frame, frames);
      }
    }
    return frames;
  } finally {
    clearTimeout(timer);
  }
}

const flowScript = (name: string) =>
  `call create_flow ${JSON.stringify({ name, nodes: [{ id: 'shape', nodeType: 'transform', data: { template: 'Hello {{inputs.name}}' } }, { id: 'out', nodeType: 'transform', data: { template: '{{previous}}!' } }], edges: [{ source: 'shape', target: 'out' }] })}`;

for (const mode of availableModes()) {
  describe(`assistant API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let bob: RegisteredUser;
    const as = (user: RegisteredUser, method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, user.auth);
    const newConversation = async (user: RegisteredUser, title?: string) => {
      const res = await as(user, 'POST', '/assistant/conversations', title ? { title } : {});
      expect(res.status, res.text).to.equal(201);
      return res.body.conversation.id as string;
    };
    const send = (user: RegisteredUser, id: string, content: string) => as(user, 'POST', `/assistant/conversations/${id}/messages`, { content });

    before(async () => {
      svc = await startTestService(mode);
      alice = await registerUser(svc.baseUrl);
      bob = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it('create, list, rename, get with history, delete', async () => {
      const id = await newConversation(alice);
      const list = await as(alice, 'GET', '/assistant/conversations');
      expect(list.status).to.equal(200);
      expect(list.body.items.find((c: { id: string }) => c.id === id)).to.include({ title: 'New conversation', messageCount: 0, runningMessageId: null });
      const renamed = await as(alice, 'PATCH', `/assistant/conversations/${id}`, { title: 'Flows help' });
      expect(renamed.status, renamed.text).to.equal(200);
      expect(renamed.body.conversation.title).to.equal('Flows help');
      const sent = await send(alice, id, 'hello there');
      expect(sent.status, sent.text).to.equal(200);
      expect(sent.body.message).to.include({ role: 'user', content: 'hello there' });
      expect(sent.body.reply).to.include({ role: 'assistant', status: 'completed', content: 'hello there', provider: 'offline', replyTo: sent.body.message.id });
      const got = await as(alice, 'GET', `/assistant/conversations/${id}`);
      expect(got.status).to.equal(200);
      expect(got.body.conversation).to.include({ title: 'Flows help', messageCount: 2, runningMessageId: null });
      expect(got.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).to.deep.equal([['user', 'hello there'], ['assistant', 'hello there']]);
      expect((await as(alice, 'DELETE', `/assistant/conversations/${id}`)).status).to.equal(200);
      expectError(await as(alice, 'GET', `/assistant/conversations/${id}`), 404, 'CONVERSATION_NOT_FOUND');
      const after = await as(alice, 'GET', '/assistant/conversations');
      expect(after.body.items.map((c: { id: string }) => c.id)).to.not.include(id);
      expectError(await as(alice, 'POST', '/assistant/conversations', { title: '' }), 400, 'VALIDATION_FAILED', 'body.title');
      expectError(await as(alice, 'POST', `/assistant/conversations/${id}/messages`, { content: '' }), 400, 'VALIDATION_FAILED', 'body.content');
    });

    it('creates a flow through the editor\'s commands (offline scripted tool call); the audit shows the assistant as actor', async () => {
      const id = await newConversation(alice, 'build');
      const res = await send(alice, id, flowScript('Greeter from assistant'));
      expect(res.status, res.text).to.equal(200);
      const reply = res.body.reply;
      expect(reply.status).to.equal('completed');
      expect(reply.tools).to.have.length(1);
      expect(reply.tools[0]).to.deep.include({ name: 'create_flow' });
      expect(reply.tools[0].result.isError, reply.tools[0].result.content).to.equal(false);
      const created = JSON.parse(reply.tools[0].result.content);
      const flowId = created.flow.id as string;
      expect(created.flow.nodes.map((n: { id: string }) => n.id)).to.deep.equal(['shape', 'out']);

      const flow = await as(alice, 'GET', `/flows/${flowId}`);
      expect(flow.status, flow.text).to.equal(200);
      expect(flow.body.flow).to.include({ name: 'Greeter from assistant', ownerId: alice.user.id });
      expect(flow.body.flow.edges).to.have.length(1);
      const audit = await as(alice, 'GET', `/flows/${flowId}/events`);
      expect(audit.status, audit.text).to.equal(200);
      expect(audit.body.items.map((e: { type: string; actorId: string }) => [e.type, e.actorId])).to.deep.equal([['FlowCreated', `assistant:${alice.user.id}`]]);
      // The log links the change to the assistant message that made it.
      const [stored] = await svc.services.eventStore.readStream(`flow-${flowId}`, { maxCount: 1 });
      expect(stored.metadata).to.include({ actorId: `assistant:${alice.user.id}`, causationId: reply.id });
      // The flow runs like any other.
      const run = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs: { name: 'Ada' } });
      expect(run.status, run.text).to.equal(200);
      expect(run.body.status).to.equal('completed');

      // The same validators as the editor: a cycle is refused, the model gets the code, nothing is written.
      const head = await svc.services.eventStore.headPosition();
      const bad = await send(alice, id, `call create_flow ${JSON.stringify({ name: 'Loop', nodes: [{ id: 'a', nodeType: 'transform', data: { template: 'x' } }], edges: [{ source: 'a', target: 'a' }] })}`);
      expect(bad.status, bad.text).to.equal(200);
      expect(bad.body.reply.tools[0].result.isError).to.equal(true);
      expect(bad.body.reply.tools[0].result.content).to.contain('SELF_LOOP');
      const flows = await as(alice, 'GET', '/flows?limit=100');
      expect(flows.body.items.map((f: { name: string }) => f.name)).to.not.include('Loop');
      expect(await svc.services.eventStore.headPosition()).to.be.greaterThan(head);
    });

    it('reads flows and explains a failed run with its tools', async () => {
      const flow = await as(alice, 'POST', '/flows', { name: 'Broken' });
      const flowId = flow.body.flow.id;
      const node = await as(alice, 'POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'webhook', webhookConfig: { url: 'http://127.0.0.1:9/nothing', method: 'POST' } } });
      expect(node.status, node.text).to.equal(201);
      const run = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs: {} });
      const processId = run.body.processId;
      expect(run.body.status, run.text).to.equal('failed');
      expect(processId, run.text).to.be.a('string');
      // explain_run reads the runs' read model, which the run's answer does not wait for.
      await waitUntil('the failed run in the read model', async () => (await as(alice, 'GET', `/flows/${flowId}/status`)).body.status === 'failed');
      const id = await newConversation(alice);
      const res = await send(alice, id, `call explain_run {"processId":"${processId}"}\ncall list_flows {}`);
      expect(res.status, res.text).to.equal(200);
      const [explain, list] = res.body.reply.tools;
      expect(explain.name).to.equal('explain_run');
      const explanation = JSON.parse(explain.result.content);
      expect(explanation).to.include({ processId, flowId, status: 'failed' });
      expect(explanation.failedNodes[0].error.code).to.match(/^OUTBOUND_|^WEBHOOK_/);
      expect(explanation.failedNodes[0].hint).to.be.a('string');
      expect(JSON.parse(list.result.content).map((f: { name: string }) => f.name)).to.include('Broken');
      // Bob's assistant sees none of it.
      const bobs = await newConversation(bob);
      const other = await send(bob, bobs, `call explain_run {"processId":"${processId}"}\ncall get_flow {"flowId":"${flowId}"}`);
      expect(other.body.reply.tools.map((t: { result: { isError: boolean } }) => t.result.isError)).to.deep.equal([true, true]);
    });

    it('streams as Server-Sent Events: message.started, tool.called, tool.result, message.delta, message.completed', async () => {
      const id = await newConversation(alice);
      const frames = await postSse(`${svc.baseUrl}/assistant/conversations/${id}/messages`, { content: 'call list_node_types {}', stream: true }, alice.auth);
      const names = frames.map((f) => f.event).filter((e) => e !== 'ping');
      expect(names[0]).to.equal('message.started');
      expect(names).to.include.members(['tool.called', 'tool.result', 'message.delta']);
      expect(names.at(-1)).to.equal('message.completed');
      expect(names.indexOf('tool.called')).to.be.lessThan(names.indexOf('tool.result'));
      const completed = frames.at(-1)!.data.message;
      expect(completed).to.include({ status: 'completed', finishReason: 'stop' });
      expect(completed.content).to.contain('llm');
      const replyId = frames[0].data.replyId;
      expect(completed.id).to.equal(replyId);
    });

    it('a dropped stream resumes with Last-Event-ID from the log: the rest of the reply, no frame twice, ids increasing', async () => {
      const id = await newConversation(alice);
      const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
      const url = `${svc.baseUrl}/assistant/conversations/${id}/messages`;
      const post = (headers: Record<string, string> = {}) => ({ method: 'POST', headers: { ...alice.auth, ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ content: `slow 60\n${words}`, stream: true }) });
      const first = await readSse(url, post(), (e) => e.event === 'message.delta' && e.data.text.includes('w3'));
      expect(first.status).to.equal(200);
      expect(first.events[0].event).to.equal('message.started');
      const lastId = first.events.at(-1)!.id!;
      expect(lastId, 'every frame carries its revision').to.match(/^\d+$/);
      const rest = await readSse(url, post({ 'Last-Event-ID': lastId }));
      expect(rest.status).to.equal(200);
      const ids = rest.events.filter((e) => e.event !== 'ping').map((e) => Number(e.id));
      expect(ids.every((n) => n > Number(lastId)), `resumed after ${lastId}: ${ids}`).to.equal(true);
      expect(rest.events.at(-1)!.event).to.equal('message.completed');
      const reply = rest.events.at(-1)!.data.message;
      expect(reply.status).to.equal('completed');
      const streamed = [...first.events, ...rest.events].filter((e) => e.event === 'message.delta').map((e) => e.data.text).join('');
      expect(streamed).to.equal(reply.content);
      expect(reply.content).to.contain('w29');
      // Resuming nothing new was sent: one user message and its reply.
      expect((await as(alice, 'GET', `/assistant/conversations/${id}`)).body.messages).to.have.length(2);
      // A finished reply replays whole from its first event; bad ids are 400 naming the header; another user's conversation 404.
      const whole = await readSse(url, post({ 'Last-Event-ID': first.events[0].id! }));
      expect(whole.events.at(-1)!.event).to.equal('message.completed');
      expectError(await call(svc.baseUrl, 'POST', `/assistant/conversations/${id}/messages`, { content: 'x', stream: true }, { ...alice.auth, 'Last-Event-ID': 'abc' }), 400, 'VALIDATION_FAILED', 'headers.last-event-id');
      expectError(await call(svc.baseUrl, 'POST', `/assistant/conversations/${id}/messages`, { content: 'x', stream: true }, { ...alice.auth, 'Last-Event-ID': '0' }), 400, 'VALIDATION_FAILED', 'headers.last-event-id');
      expectError(await call(svc.baseUrl, 'POST', `/assistant/conversations/${id}/messages`, { content: 'x', stream: true }, { ...bob.auth, 'Last-Event-ID': lastId }), 404, 'CONVERSATION_NOT_FOUND');
    });

    it('cancel stops the reply within 1 s, records GenerationCancelled and keeps the partial answer; 409 while busy', async () => {
      const id = await newConversation(alice);
      const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
      let cancelAt = 0;
      let cancelled: Promise<Awaited<ReturnType<typeof as>>> | null = null;
      let busy: Promise<Awaited<ReturnType<typeof as>>> | null = null;
      const frames = await postSse(`${svc.baseUrl}/assistant/conversations/${id}/messages`, { content: `slow 150\n${words}`, stream: true }, alice.auth, (frame, all) => {
        if (frame.event === 'message.delta' && all.filter((f) => f.event === 'message.delta').length === 3 && !cancelled) {
          // A message while the reply runs is refused; then the cancel (timed from its own start).
          busy = send(alice, id, 'another one');
          cancelled = busy.then(() => {
            cancelAt = Date.now();
            return as(alice, 'POST', `/assistant/conversations/${id}/cancel`);
          });
        }
      });
      const res = await cancelled!;
      const took = Date.now() - cancelAt;
      expect(res.status, res.text).to.equal(200);
      expect(took, 'cancel answered within 1 s').to.be.lessThan(1_000);
      expect(res.body.cancelled).to.equal(true);
      const partial = res.body.message.content as string;
      expect(partial, res.text).to.match(/^w0 w1 w2/);
      expect(res.body.message).to.include({ status: 'cancelled', finishReason: 'cancelled' });
      expect(partial).to.not.contain('w59');
      const busyRes = await busy!;
      expectError(busyRes, 409, 'CONVERSATION_BUSY');
      expect(busyRes.body.error.details.runningMessageId).to.equal(res.body.message.id);
      // The stream ended with the cancelled reply, and no delta came after the cancel was answered.
      const last = frames.filter((f) => f.event !== 'ping').at(-1)!;
      expect(last.event).to.equal('message.completed');
      expect(last.data.message.status).to.equal('cancelled');
      const streamed = frames.filter((f) => f.event === 'message.delta').map((f) => f.data.text).join('');
      expect(partial.startsWith(streamed.trimEnd()) || streamed.startsWith(partial)).to.equal(true);
      // The log has it, the history shows it, and the conversation takes a new message.
      const types = (await svc.services.eventStore.readStream(`assistantconv-${id}`)).map((e) => e.type);
      expect(types).to.include.members(['GenerationCancelRequested', 'GenerationCancelled']);
      const got = await as(alice, 'GET', `/assistant/conversations/${id}`);
      expect(got.body.messages[1]).to.include({ status: 'cancelled', content: partial });
      expect((await send(alice, id, 'next')).status).to.equal(200);
      // Nothing running: cancel says so.
      const idle = await as(alice, 'POST', `/assistant/conversations/${id}/cancel`);
      expect(idle.body).to.deep.include({ cancelled: false, message: null });
    });

    it('feedback: like with a comment, change, withdraw with null; not on user messages', async () => {
      const id = await newConversation(alice);
      const sent = await send(alice, id, 'rate me');
      const replyId = sent.body.reply.id;
      const path = `/assistant/conversations/${id}/messages/${replyId}/feedback`;
      const liked = await as(alice, 'POST', path, { rating: 'like', comment: 'useful' });
      expect(liked.status, liked.text).to.equal(200);
      expect(liked.body.message.feedback).to.include({ rating: 'like', comment: 'useful' });
      expect((await as(alice, 'POST', path, { rating: 'dislike' })).body.message.feedback).to.include({ rating: 'dislike', comment: null });
      const withdrawn = await as(alice, 'POST', path, { rating: null });
      expect(withdrawn.body.message.feedback).to.equal(null);
      const got = await as(alice, 'GET', `/assistant/conversations/${id}`);
      expect(got.body.messages[1].feedback).to.equal(null);
      expectError(await as(alice, 'POST', `/assistant/conversations/${id}/messages/${sent.body.message.id}/feedback`, { rating: 'like' }), 400, 'FEEDBACK_ON_USER_MESSAGE');
      expectError(await as(alice, 'POST', `/assistant/conversations/${id}/messages/nope/feedback`, { rating: 'like' }), 404, 'MESSAGE_NOT_FOUND');
      expectError(await as(alice, 'POST', path, { rating: 'meh' }), 400, 'VALIDATION_FAILED', 'body.rating');
    });

    it('uses the active skills: descriptions in the prompt, load_skill for the content', async () => {
      const skill = await as(alice, 'POST', '/skills', { name: 'Flow style', description: 'how we name flows', content: 'Name flows with a verb first.' });
      expect(skill.status).to.equal(201);
      const id = await newConversation(alice);
      const res = await send(alice, id, `call load_skill {"skill":"${skill.body.skill.id}"}`);
      expect(res.body.reply.tools[0]).to.deep.include({ name: 'load_skill' });
      expect(res.body.reply.content).to.contain('Name flows with a verb first.');
      expect((await as(alice, 'DELETE', `/skills/${skill.body.skill.id}`)).status).to.equal(200);
    });

    it("tenant isolation: another user's conversation answers 404 on every operation", async () => {
      const id = await newConversation(alice);
      const sent = await send(alice, id, 'mine');
      expectError(await as(bob, 'GET', `/assistant/conversations/${id}`), 404, 'CONVERSATION_NOT_FOUND');
      expectError(await as(bob, 'PATCH', `/assistant/conversations/${id}`, { title: 'x' }), 404, 'CONVERSATION_NOT_FOUND');
      expectError(await as(bob, 'DELETE', `/assistant/conversations/${id}`), 404, 'CONVERSATION_NOT_FOUND');
      expectError(await send(bob, id, 'hi'), 404, 'CONVERSATION_NOT_FOUND');
      expectError(await as(bob, 'POST', `/assistant/conversations/${id}/cancel`), 404, 'CONVERSATION_NOT_FOUND');
      expectError(await as(bob, 'POST', `/assistant/conversations/${id}/messages/${sent.body.reply.id}/feedback`, { rating: 'like' }), 404, 'CONVERSATION_NOT_FOUND');
      const list = await as(bob, 'GET', '/assistant/conversations');
      expect(list.body.items.map((c: { id: string }) => c.id)).to.not.include(id);
      expectError(await call(svc.baseUrl, 'GET', '/assistant/conversations'), 401);
    });

    it('a restart (every process stopped, then started on the same data; read models rebuilt from the log) keeps the history', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'assistant-restart-'));
      const first = await startTestService(mode, { DATA_DIR: dataDir });
      const carol = await registerUser(first.baseUrl);
      const id = (await call(first.baseUrl, 'POST', '/assistant/conversations', { title: 'persist' }, carol.auth)).body.conversation.id;
      expect((await call(first.baseUrl, 'POST', `/assistant/conversations/${id}/messages`, { content: 'first question' }, carol.auth)).status).to.equal(200);
      expect((await call(first.baseUrl, 'POST', `/assistant/conversations/${id}/messages`, { content: 'second question' }, carol.auth)).status).to.equal(200);
      // stop() removes its DATA_DIR: move the directory aside first (open files follow), so the data outlives the stop.
      const kept = `${dataDir}-kept`;
      renameSync(dataDir, kept);
      await first.stop();
      const again = await startTestService(mode, { DATA_DIR: kept });
      try {
        const got = await waitUntil('history rebuilt', async () => {
          const res = await call(again.baseUrl, 'GET', `/assistant/conversations/${id}`, undefined, carol.auth);
          return res.status === 200 && res.body.messages.length === 4 && res.body.messages[3].status === 'completed' ? res : null;
        });
        expect(got.body.conversation.title).to.equal('persist');
        expect(got.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(['first question', 'first question', 'second question', 'second question']);
        const third = await call(again.baseUrl, 'POST', `/assistant/conversations/${id}/messages`, { content: 'third' }, carol.auth);
        expect(third.status, third.text).to.equal(200);
        expect(third.body.reply).to.include({ status: 'completed', content: 'third' });
      } finally {
        await again.stop();
      }
    });
  });
}
