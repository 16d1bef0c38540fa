import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';
import { readSse } from '../support/sse-client.js';
import { startToolServer } from '../support/tool-server.js';

for (const mode of availableModes()) {
  describe(`agents API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let bob: RegisteredUser;
    let tool: Awaited<ReturnType<typeof startToolServer>>;
    const client = flowClient(() => svc);
    const as = (user: RegisteredUser, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(svc.baseUrl, method, path, body, { ...user.auth, ...headers });
    const httpTool = () => ({ kind: 'http', webhookConfig: { url: tool.url, method: 'POST', name: 'lookup', description: 'looks things up', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } });
    const newAgent = async (user: RegisteredUser, extra: Record<string, unknown> = {}) => {
      const res = await as(user, 'POST', '/agents', { name: 'Helper', provider: 'offline', model: 'offline', instructions: 'Be brief.', tools: [httpTool(), { kind: 'memory' }], memory: { enabled: true, scope: 'agent' }, ...extra });
      expect(res.status, res.text).to.equal(201);
      return res.body.agent;
    };
    const newSession = async (user: RegisteredUser, agentId: string) => {
      const res = await as(user, 'POST', `/agents/${agentId}/sessions`, { title: 'chat' });
      expect(res.status, res.text).to.equal(201);
      return res.body.session;
    };
    const send = (user: RegisteredUser, agentId: string, sessionId: string, content: string, extra: Record<string, unknown> = {}) =>
      as(user, 'POST', `/agents/${agentId}/sessions/${sessionId}/messages`, { content, ...extra });
    const stream = (user: RegisteredUser, agentId: string, sessionId: string, content: string, headers: Record<string, string> = {}, until?: (e: { event: string; data: any }) => boolean, controller?: AbortController) =>
      readSse(`${svc.baseUrl}/agents/${agentId}/sessions/${sessionId}/messages`, { method: 'POST', headers: { 'content-type': 'application/json', ...user.auth, ...headers }, body: JSON.stringify({ content, stream: true }) }, until, controller);

    before(async () => {
      tool = await startToolServer();
      svc = await startTestService(mode, { ALLOW_PRIVATE_NETWORK: 'true', AGENTS_CONTEXT_TOKENS: '2000' });
      alice = await registerUser(svc.baseUrl);
      bob = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
      await tool?.close();
    });

    it('creates, reads, lists, replaces and deletes agents; another tenant gets 404 and an empty list', async () => {
      const agent = await newAgent(alice);
      expect(agent).to.include({ name: 'Helper', provider: 'offline', model: 'offline' });
      expect(agent.limits).to.deep.equal({ maxIterations: 8, maxToolCalls: 32, maxTokens: null, timeoutMs: 300_000 });
      expect((await as(alice, 'GET', `/agents/${agent.id}`)).body.agent.id).to.equal(agent.id);
      const list = await as(alice, 'GET', '/agents?limit=10');
      expect(list.body.items.map((a: { id: string }) => a.id)).to.include(agent.id);
      expectError(await as(bob, 'GET', `/agents/${agent.id}`), 404, 'AGENT_NOT_FOUND');
      expectError(await as(bob, 'PUT', `/agents/${agent.id}`, { name: 'x', provider: 'offline', model: 'm' }), 404, 'AGENT_NOT_FOUND');
      expectError(await as(bob, 'POST', `/agents/${agent.id}/sessions`, {}), 404, 'AGENT_NOT_FOUND');
      expect((await as(bob, 'GET', '/agents')).body.items).to.deep.equal([]);
      const put = await as(alice, 'PUT', `/agents/${agent.id}`, { name: 'Renamed', provider: 'offline', model: 'offline', limits: { maxIterations: 3 } });
      expect(put.status, put.text).to.equal(200);
      expect(put.body.agent).to.include({ name: 'Renamed' });
      expect(put.body.agent.limits.maxIterations).to.equal(3);
      expectError(await as(alice, 'POST', '/agents', { name: 'x', provider: 'offline', model: 'm', limits: { maxIterations: 51 } }), 400, 'VALIDATION_FAILED', 'body.limits.maxIterations');
      expect((await as(alice, 'DELETE', `/agents/${agent.id}`)).status).to.equal(200);
      expectError(await as(alice, 'GET', `/agents/${agent.id}`), 404, 'AGENT_NOT_FOUND');
    });

    it('answers a message with tool calls recorded, and the next turn sees the history from the log', async () => {
      const agent = await newAgent(alice);
      const session = await newSession(alice, agent.id);
      tool.setDelay(0);
      const first = await send(alice, agent.id, session.id, 'call lookup {"q":"weather"}\ncall memory_save {"text":"alice likes cats"}');
      expect(first.status, first.text).to.equal(200);
      const m = first.body.message;
      expect(m.status).to.equal('completed');
      expect(m.answer.finishReason).to.equal('stop');
      expect(m.answer.iterations).to.equal(2);
      expect(m.toolCalls.map((c: { name: string }) => c.name)).to.deep.equal(['lookup', 'memory_save']);
      expect(m.toolCalls.every((c: any) => c.result && !c.result.isError), JSON.stringify(m.toolCalls)).to.equal(true);
      expect(m.answer.text).to.include('HTTP 200').and.include('weather');
      const second = await send(alice, agent.id, session.id, 'and now?');
      expect(second.body.message.context.includedMessageIds).to.deep.equal([m.id]);
      expect(second.body.message.answer.text).to.equal('and now?');
      const got = await as(alice, 'GET', `/agents/${agent.id}/sessions/${session.id}`);
      expect(got.body.session.messages.map((x: { id: string }) => x.id)).to.deep.equal([m.id, second.body.message.id]);
      expectError(await as(bob, 'GET', `/agents/${agent.id}/sessions/${session.id}`), 404, 'SESSION_NOT_FOUND');
      expectError(await send(bob, agent.id, session.id, 'hi'), 404);
      const sessions = await as(alice, 'GET', `/agents/${agent.id}/sessions`);
      await waitUntil('session listed', async () => (await as(alice, 'GET', `/agents/${agent.id}/sessions`)).body.items.find((s: any) => s.id === session.id && s.messageCount === 2));
      expect(sessions.status).to.equal(200);
    });

    it('drops the oldest turns beyond the context budget and says which', async () => {
      const agent = await newAgent(alice, { tools: [] });
      const session = await newSession(alice, agent.id);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await send(alice, agent.id, session.id, `${i} ${'word '.repeat(600)}`)).body.message.id);
      const last = (await send(alice, agent.id, session.id, 'short')).body.message;
      expect(last.context.droppedMessageIds.length).to.be.greaterThan(0);
      expect(last.context.droppedMessageIds[0]).to.equal(ids[0]);
      expect([...last.context.droppedMessageIds, ...last.context.includedMessageIds]).to.deep.equal(ids);
      expect(last.context.estimatedTokens).to.be.at.most(last.context.budgetTokens);
    });

    it('streams named events with ids; a client that drops resumes with Last-Event-ID from the log', async () => {
      const agent = await newAgent(alice);
      const session = await newSession(alice, agent.id);
      tool.setDelay(200);
      const whole = await stream(alice, agent.id, session.id, 'call lookup {"q":"one"}\nslow 20\nsome words to stream');
      expect(whole.status).to.equal(200);
      const names = whole.events.map((e) => e.event);
      expect(names[0]).to.equal('message.started');
      expect(names).to.include.members(['tool.called', 'tool.result', 'message.delta']);
      expect(names[names.length - 1]).to.equal('message.completed');
      const ids = whole.events.map((e) => Number(e.id));
      expect(ids.every((id, i) => i === 0 || id > ids[i - 1])).to.equal(true);
      const completed = whole.events[whole.events.length - 1].data;
      expect(completed.finishReason).to.equal('stop');
      expect(whole.events.filter((e) => e.event === 'message.delta').map((e) => e.data.text).join('')).to.equal(completed.text);

      // Drop after tool.called, resume: the rest arrives exactly once, in order.
      const dropped = await stream(alice, agent.id, session.id, 'call lookup {"q":"two"}', {}, (e) => e.event === 'tool.called');
      const lastSeen = dropped.events[dropped.events.length - 1].id!;
      const resumed = await stream(alice, agent.id, session.id, 'ignored', { 'Last-Event-ID': lastSeen });
      expect(resumed.events[0].event).to.equal('tool.result');
      expect(resumed.events.map((e) => e.event).at(-1)).to.equal('message.completed');
      expect(Number(resumed.events[0].id)).to.be.greaterThan(Number(lastSeen));
      // The turn was not sent twice: 2 messages in the session.
      const got = await as(alice, 'GET', `/agents/${agent.id}/sessions/${session.id}`);
      expect(got.body.session.messages).to.have.length(2);
      // The GET stream of a finished message replays it whole.
      const replay = await readSse(`${svc.baseUrl}/agents/${agent.id}/sessions/${session.id}/messages/${got.body.session.messages[1].id}/events`, { headers: alice.auth });
      expect(replay.events.map((e) => e.event)).to.deep.equal([...dropped.events.map((e) => e.event), ...resumed.events.map((e) => e.event)]);
      expectError(await as(alice, 'POST', `/agents/${agent.id}/sessions/${session.id}/messages`, { content: 'x', stream: true }, { 'Last-Event-ID': 'abc' }), 400, 'VALIDATION_FAILED', 'headers.last-event-id');
    });

    it('a busy session answers 409 SESSION_BUSY with the running message; cancel stops it within 1 s and keeps the partial answer', async () => {
      const agent = await newAgent(alice);
      const session = await newSession(alice, agent.id);
      const controller = new AbortController();
      const started = stream(alice, agent.id, session.id, `slow 100\n${'word '.repeat(100)}`, {}, undefined, controller);
      const running = await waitUntil('turn running', async () => (await as(alice, 'GET', `/agents/${agent.id}/sessions/${session.id}`)).body.session.messages.find((m: any) => m.answer.text.length > 0 && m.status === 'running'));
      const busy = await send(alice, agent.id, session.id, 'another');
      expectError(busy, 409, 'SESSION_BUSY');
      expect(busy.body.error.details.messageId).to.equal(running.id);
      const t0 = Date.now();
      const cancelled = await as(alice, 'POST', `/agents/${agent.id}/sessions/${session.id}/messages/${running.id}/cancel`);
      expect(Date.now() - t0).to.be.below(1000);
      expect(cancelled.status, cancelled.text).to.equal(200);
      expect(cancelled.body.message.answer.finishReason).to.equal('cancelled');
      expect(cancelled.body.message.answer.text).to.match(/^word/);
      expect(cancelled.body.message.answer.text.length).to.be.below('word '.repeat(100).length);
      const read = await started;
      expect(read.events.at(-1)!.data.finishReason).to.equal('cancelled');
      // The session takes messages again, and the partial answer is in its history.
      const next = await send(alice, agent.id, session.id, 'hello again');
      expect(next.status, next.text).to.equal(200);
      expect(next.body.message.context.includedMessageIds).to.include(running.id);
      expectError(await as(bob, 'POST', `/agents/${agent.id}/sessions/${session.id}/messages/${running.id}/cancel`), 404);
    });

    it('cancel aborts every tool in flight and starts no tool after it', async () => {
      const agent = await newAgent(alice, { tools: [httpTool()], limits: { maxIterations: 50 } });
      const session = await newSession(alice, agent.id);
      tool.setDelay(60_000);
      const before = tool.calls.length;
      const read = stream(alice, agent.id, session.id, 'loop lookup {"q":"a"}\nloop lookup {"q":"b"}');
      await waitUntil('two tools in flight', async () => tool.calls.length >= before + 2);
      const messageId = (await as(alice, 'GET', `/agents/${agent.id}/sessions/${session.id}`)).body.session.running;
      const t0 = Date.now();
      const cancelled = await as(alice, 'POST', `/agents/${agent.id}/sessions/${session.id}/messages/${messageId}/cancel`);
      expect(Date.now() - t0).to.be.below(1000);
      expect(cancelled.body.message.answer.finishReason).to.equal('cancelled');
      const events = (await read).events;
      expect(events.at(-1)!.event).to.equal('message.completed');
      await waitUntil('tool requests aborted', async () => tool.calls.slice(before).every((c) => c.aborted));
      const count = tool.calls.length;
      // Negative check, kept as a short window: the turn has ended (message.completed, tools aborted), and nothing the service exposes would show a loop that ignored its own end starting one more tool.
      await new Promise((r) => setTimeout(r, 300));
      expect(tool.calls.length, 'no tool started after the cancel').to.equal(count);
      expect(count - before).to.equal(2);
      tool.setDelay(0);
    });

    it('limits end the turn with their finishReason: max_iterations, max_tool_calls, timeout', async () => {
      const looping = await newAgent(alice, { tools: [{ kind: 'memory' }], limits: { maxIterations: 3 } });
      const s1 = await newSession(alice, looping.id);
      const iterations = (await send(alice, looping.id, s1.id, 'loop memory_search {"query":"x"}')).body.message;
      expect(iterations.answer.finishReason).to.equal('max_iterations');
      expect(iterations.answer.iterations).to.equal(3);
      expect(iterations.answer.text).to.not.match(/loop|tool_call|<tool/);

      const calls = await newAgent(alice, { tools: [{ kind: 'memory' }], limits: { maxToolCalls: 2 } });
      const s2 = await newSession(alice, calls.id);
      const capped = (await send(alice, calls.id, s2.id, 'call memory_search {"query":"a"}\ncall memory_search {"query":"b"}\ncall memory_search {"query":"c"}')).body.message;
      expect(capped.answer.finishReason).to.equal('max_tool_calls');
      expect(capped.toolCalls.map((c: any) => c.result.skipped)).to.deep.equal([null, null, 'max_tool_calls']);

      const slow = await newAgent(alice, { tools: [], limits: { timeoutMs: 1000 } });
      const s3 = await newSession(alice, slow.id);
      const t0 = Date.now();
      const timedOut = (await send(alice, slow.id, s3.id, `slow 300\n${'word '.repeat(20)}`)).body.message;
      expect(timedOut.answer.finishReason).to.equal('timeout');
      expect(Date.now() - t0).to.be.below(2500);
      expect(timedOut.answer.text).to.match(/^word/);
    });

    it('malformed tool arguments reach the model as an error result, not a failed turn', async () => {
      const agent = await newAgent(alice, { tools: [{ kind: 'memory' }] });
      const session = await newSession(alice, agent.id);
      const m = (await send(alice, agent.id, session.id, 'call memory_search {"query": ')).body.message;
      expect(m.answer.finishReason).to.equal('stop');
      expect(m.toolCalls[0].result).to.include({ isError: true, skipped: 'invalid_arguments' });
      expect(m.answer.text).to.include('not a JSON object');
    });

    it('a flow tool runs the flow with the arguments as inputs (its trigger schema reaches the model); skills load with load_skill', async () => {
      const flowId = await client.newFlow(alice);
      await client.addNode(alice, flowId, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: 'topic is {{inputs.topic}}' } });
      const schema = { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] };
      expect((await as(alice, 'PUT', `/flows/${flowId}/trigger`, { enabled: true, inputSchema: schema })).status).to.equal(200);
      const skill = await as(alice, 'POST', '/skills', { name: 'Pirate', description: 'talk like a pirate', content: 'Say arr in every sentence.' });
      expect(skill.status, skill.text).to.equal(201);
      const agent = await newAgent(alice, { tools: [{ kind: 'flow', flowId, name: 'topics' }], skills: [skill.body.skill.id] });
      const session = await newSession(alice, agent.id);
      const ran = (await send(alice, agent.id, session.id, 'call topics {"topic":"cats"}')).body.message;
      expect(ran.answer.finishReason, JSON.stringify(ran)).to.equal('stop');
      expect(ran.toolCalls[0].result.isError, ran.toolCalls[0].result.content).to.equal(false);
      expect(ran.answer.text).to.include('topic is cats');
      const missing = (await send(alice, agent.id, session.id, 'call topics {}')).body.message;
      expect(missing.toolCalls[0].result).to.include({ isError: true, skipped: 'invalid_arguments' });
      const loaded = (await send(alice, agent.id, session.id, `call load_skill {"skill":"${skill.body.skill.id}"}`)).body.message;
      expect(loaded.answer.text).to.include('Say arr in every sentence.');
      // Bob cannot use Alice's flow: in his agent the tool is unavailable, and the model is told.
      const bobs = await newAgent(bob, { tools: [{ kind: 'flow', flowId, name: 'topics' }] });
      const bobSession = await newSession(bob, bobs.id);
      const refused = (await send(bob, bobs.id, bobSession.id, 'call topics {"topic":"x"}')).body.message;
      expect(refused.toolCalls).to.deep.equal([]);
    });

    it('deleting a session stops its turn and answers 404 after', async () => {
      const agent = await newAgent(alice, { tools: [] });
      const session = await newSession(alice, agent.id);
      const read = stream(alice, agent.id, session.id, `slow 100\n${'word '.repeat(50)}`);
      await waitUntil('running', async () => (await as(alice, 'GET', `/agents/${agent.id}/sessions/${session.id}`)).body.session.running);
      expect((await as(alice, 'DELETE', `/agents/${agent.id}/sessions/${session.id}`)).status).to.equal(200);
      await read;
      expectError(await as(alice, 'GET', `/agents/${agent.id}/sessions/${session.id}`), 404, 'SESSION_NOT_FOUND');
    });
  });
}
