import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { TestClock } from '../support/clock.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const LEASE = 30;
const OFFLINE_AFTER = 300;
const PROMPT_LEASE = 60;

interface SseFrame {
  id: string | null;
  event: string;
  data: any;
}

/** Reads an SSE response until `enough(frames)` holds, then closes the connection. */
async function readSse(url: string, headers: Record<string, string>, enough: (frames: SseFrame[]) => boolean, timeoutMs = 10_000) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const frames: SseFrame[] = [];
  try {
    const res = await fetch(url, { headers, signal: abort.signal });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    while (!enough(frames)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const frame: SseFrame = { id: null, event: 'message', data: null };
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) frame.id = line.slice(4);
          else if (line.startsWith('event: ')) frame.event = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (!data) continue;
        frame.data = JSON.parse(data);
        frames.push(frame);
      }
    }
    return frames;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

for (const mode of availableModes()) {
  describe(`remote terminals (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let clock: TestClock;
    let alice: RegisteredUser;
    let bob: RegisteredUser;
    let cli: Record<string, string>;

    before(async () => {
      clock = new TestClock();
      svc = await startTestService(
        mode,
        { REMOTE_TERMINAL_LEASE_SECONDS: String(LEASE), REMOTE_TERMINAL_OFFLINE_AFTER: String(OFFLINE_AFTER), REMOTE_PROMPT_LEASE_SECONDS: String(PROMPT_LEASE), REMOTE_SSE_PING_SECONDS: '1' },
        { clock },
      );
      alice = await registerUser(svc.baseUrl);
      bob = await registerUser(svc.baseUrl);
      const token = await call(svc.baseUrl, 'POST', '/cli/tokens', { name: 'laptop' }, alice.auth);
      expect(token.status, token.text).to.equal(201);
      cli = bearer(token.body.token);
    });
    after(async () => svc?.stop());

    const register = async (name = 'laptop', headers = cli) => {
      const res = await call(svc.baseUrl, 'POST', '/remote/terminals', { name, host: 'alice-mbp', cwd: '/home/alice/project', capabilities: ['shell'] }, headers);
      expect(res.status, res.text).to.equal(201);
      return res.body.terminal as { id: string; status: string };
    };
    const send = async (tid: string, content: string) => {
      const res = await call(svc.baseUrl, 'POST', `/remote/terminals/${tid}/prompts`, { content }, alice.auth);
      expect(res.status, res.text).to.equal(202);
      return res.body.prompt as { id: string; status: string };
    };
    const poll = (tid: string, wait = 0) => call(svc.baseUrl, 'GET', `/remote/terminals/${tid}/prompts/next?wait=${wait}`, undefined, cli);
    const terminal = async (tid: string) => (await call(svc.baseUrl, 'GET', `/remote/terminals/${tid}`, undefined, alice.auth)).body.terminal;

    it('registers with a CLI token (201 {terminal, leaseSeconds}), lists it, refuses API keys and bad input', async () => {
      const res = await call(svc.baseUrl, 'POST', '/remote/terminals', { name: 'laptop', host: 'alice-mbp' }, cli);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.leaseSeconds).to.equal(LEASE);
      expect(res.body.terminal).to.include({ name: 'laptop', host: 'alice-mbp', cwd: null, status: 'ONLINE', connected: true, currentPrompt: null });
      expect(res.body.terminal.capabilities).to.deep.equal([]);
      const list = await call(svc.baseUrl, 'GET', '/remote/terminals', undefined, alice.auth);
      expect(list.status).to.equal(200);
      expect(list.body.items.map((t: { id: string }) => t.id)).to.include(res.body.terminal.id);

      const jwt = await call(svc.baseUrl, 'POST', '/remote/terminals', { name: 'by session', host: 'h' }, alice.auth);
      expect(jwt.status, jwt.text).to.equal(201);
      const key = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'automation' }, alice.auth);
      const byKey = await call(svc.baseUrl, 'POST', '/remote/terminals', { name: 'k', host: 'h' }, bearer(key.body.key));
      expect(byKey.status, byKey.text).to.equal(403);
      expect(byKey.body.error.code).to.equal('CLI_CREDENTIAL_REQUIRED');

      const noName = await call(svc.baseUrl, 'POST', '/remote/terminals', { host: 'h' }, cli);
      expect(noName.status).to.equal(400);
      expect(noName.body.error.code).to.equal('VALIDATION_FAILED');
      expect(noName.body.error.details.fields.map((f: { field: string }) => f.field)).to.deep.equal(['body.name']);
      const tid = res.body.terminal.id;
      const badWait = await call(svc.baseUrl, 'GET', `/remote/terminals/${tid}/prompts/next?wait=soon`, undefined, cli);
      expect(badWait.status).to.equal(400);
      expect(badWait.body.error.details.fields[0].field).to.equal('query.wait');
      const badStep = await call(svc.baseUrl, 'POST', `/remote/terminals/${tid}/prompts/p1/steps`, { steps: [{ seq: -1, kind: 'thinking', content: 'x' }] }, cli);
      expect(badStep.status).to.equal(400);
      expect(badStep.body.error.details.fields[0].field).to.equal('body.steps.0.seq');
      const badAnswer = await call(svc.baseUrl, 'POST', `/remote/terminals/${tid}/prompts/p1/answer`, { content: 'x', status: 'done' }, cli);
      expect(badAnswer.body.error.details.fields[0].field).to.equal('body.status');
      const badId = await call(svc.baseUrl, 'GET', '/remote/terminals/not%20an%20id', undefined, alice.auth);
      expect(badId.status).to.equal(400);
      expect(badId.body.error.details.fields[0].field).to.equal('params.terminalId');
      const badLastId = await fetch(`${svc.baseUrl}/remote/terminals/${tid}/events`, { headers: { ...alice.auth, 'Last-Event-ID': 'abc' } });
      expect(badLastId.status).to.equal(400);
      expect((await badLastId.json()).error.details.fields[0].field).to.equal('headers.last-event-id');
    });

    it('derives ONLINE, STALE after two missed leases, OFFLINE after REMOTE_TERMINAL_OFFLINE_AFTER; a heartbeat brings it back; DELETE disconnects without deleting', async () => {
      const t = await register();
      expect(t.status).to.equal('ONLINE');
      clock.advance(2 * LEASE * 1000 - 1000);
      expect((await terminal(t.id)).status).to.equal('ONLINE');
      clock.advance(2_000);
      expect((await terminal(t.id)).status).to.equal('STALE');
      clock.advance(OFFLINE_AFTER * 1000);
      expect((await terminal(t.id)).status).to.equal('OFFLINE');
      const beat = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/heartbeat`, undefined, cli);
      expect(beat.status, beat.text).to.equal(200);
      expect(beat.body).to.deep.include({ leaseSeconds: LEASE, cancelledPromptIds: [] });
      expect(beat.body.terminal.status).to.equal('ONLINE');
      // The test clock runs with the wall clock: the beat was taken within the last few seconds (not at an advanced-past time).
      const beatAgeMs = clock.now().getTime() - Date.parse(beat.body.terminal.lastHeartbeatAt);
      expect(beatAgeMs).to.be.within(0, 5_000);

      const gone = await call(svc.baseUrl, 'DELETE', `/remote/terminals/${t.id}`, undefined, cli);
      expect(gone.status, gone.text).to.equal(200);
      expect(gone.body.terminal).to.include({ status: 'OFFLINE', connected: false });
      const listed = await call(svc.baseUrl, 'GET', '/remote/terminals?limit=100', undefined, alice.auth);
      expect(listed.body.items.find((x: { id: string }) => x.id === t.id)).to.include({ status: 'OFFLINE' });
    });

    it('queues a prompt while the terminal is OFFLINE and delivers it when it reconnects', async () => {
      const t = await register();
      await call(svc.baseUrl, 'DELETE', `/remote/terminals/${t.id}`, undefined, cli);
      const res = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts`, { content: 'run the tests' }, alice.auth);
      expect(res.status, res.text).to.equal(202);
      expect(res.body.prompt).to.include({ status: 'queued', content: 'run the tests', delivery: 0 });
      expect(res.body.terminalStatus).to.equal('OFFLINE');
      expect((await terminal(t.id)).currentPrompt).to.include({ id: res.body.prompt.id, status: 'queued' });

      const beat = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/heartbeat`, undefined, cli);
      expect(beat.body.terminal).to.include({ status: 'ONLINE', connected: true });
      const next = await poll(t.id);
      expect(next.status, next.text).to.equal(200);
      expect(next.body.prompt).to.include({ id: res.body.prompt.id, status: 'delivered', delivery: 1, content: 'run the tests' });
    });

    it('a long poll answers as soon as a prompt arrives, and releases its waiter', async () => {
      const t = await register();
      const started = Date.now();
      const waiters = svc.services.streamSignals.waiting;
      const pending = poll(t.id, 20);
      await waitUntil('the long poll to wait on the stream', async () => svc.services.streamSignals.waiting > waiters, 5_000);
      const sent = await send(t.id, 'hello');
      const res = await pending;
      expect(res.status, res.text).to.equal(200);
      expect(res.body.prompt.id).to.equal(sent.id);
      expect(Date.now() - started).to.be.lessThan(10_000);
      await waitUntil('waiters released', async () => svc.services.streamSignals.waiting === 0, 5_000);
      const empty = await poll(t.id, 1);
      expect(empty.body).to.deep.include({ prompt: null, cancelledPromptIds: [] });
    });

    it('hands a prompt out again after its lease ran out unacknowledged; a step acknowledges it for good', async () => {
      const t = await register();
      const sent = await send(t.id, 'redeliver me');
      expect((await poll(t.id)).body.prompt).to.include({ id: sent.id, delivery: 1 });
      expect((await poll(t.id)).body.prompt).to.equal(null);
      clock.advance((PROMPT_LEASE + 1) * 1000);
      const again = await poll(t.id);
      expect(again.body.prompt).to.include({ id: sent.id, delivery: 2 });
      const step = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts/${sent.id}/steps`, { steps: [{ seq: 0, kind: 'status', content: 'started' }] }, cli);
      expect(step.status, step.text).to.equal(200);
      expect(step.body.prompt.status).to.equal('running');
      clock.advance((PROMPT_LEASE + 1) * 1000);
      expect((await poll(t.id)).body.prompt).to.equal(null);
    });

    it('steps are idempotent by seq; the answer completes the prompt, a repeat is a no-op, a different one 409', async () => {
      const t = await register();
      const sent = await send(t.id, 'count to three');
      const undelivered = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts/${sent.id}/answer`, { content: 'x', status: 'completed' }, cli);
      expect(undelivered.status).to.equal(409);
      expect(undelivered.body.error.code).to.equal('PROMPT_NOT_DELIVERED');
      await poll(t.id);
      const url = `/remote/terminals/${t.id}/prompts/${sent.id}/steps`;
      const first = await call(svc.baseUrl, 'POST', url, { steps: [{ seq: 0, kind: 'thinking', content: 'hmm' }, { seq: 1, kind: 'output', content: 'one' }] }, cli);
      expect(first.body).to.deep.include({ accepted: [0, 1], duplicates: [] });
      const retry = await call(svc.baseUrl, 'POST', url, { steps: [{ seq: 0, kind: 'thinking', content: 'hmm' }, { seq: 1, kind: 'output', content: 'one' }, { seq: 2, kind: 'output', content: 'two' }] }, cli);
      expect(retry.body).to.deep.include({ accepted: [2], duplicates: [0, 1] });
      expect(retry.body.prompt.stepCount).to.equal(3);

      const answerUrl = `/remote/terminals/${t.id}/prompts/${sent.id}/answer`;
      const answer = await call(svc.baseUrl, 'POST', answerUrl, { content: 'one two three', status: 'completed' }, cli);
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.duplicate).to.equal(false);
      expect(answer.body.prompt).to.include({ status: 'completed' });
      const repeat = await call(svc.baseUrl, 'POST', answerUrl, { content: 'one two three', status: 'completed' }, cli);
      expect(repeat.body.duplicate).to.equal(true);
      const other = await call(svc.baseUrl, 'POST', answerUrl, { content: 'four', status: 'completed' }, cli);
      expect(other.status).to.equal(409);
      expect(other.body.error.code).to.equal('PROMPT_ALREADY_ANSWERED');

      const got = await call(svc.baseUrl, 'GET', `/remote/terminals/${t.id}/prompts/${sent.id}`, undefined, alice.auth);
      expect(got.body.prompt.answer).to.include({ content: 'one two three', status: 'completed' });
      const thread = await call(svc.baseUrl, 'GET', `/remote/terminals/${t.id}/thread?limit=100`, undefined, alice.auth);
      expect(thread.body.items.map((e: { type: string }) => e.type)).to.deep.equal(['prompt', 'delivered', 'step', 'step', 'step', 'answer']);
      const answers = thread.body.items.filter((e: { type: string }) => e.type === 'answer');
      expect(answers).to.have.length(1);

      const mirror = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/mirror`, { entries: [{ seq: 0, role: 'user', content: 'ls' }, { seq: 1, role: 'assistant', content: 'a b' }] }, cli);
      expect(mirror.body).to.deep.include({ accepted: [0, 1], duplicates: [] });
      const mirrorAgain = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/mirror`, { entries: [{ seq: 1, role: 'assistant', content: 'a b' }] }, cli);
      expect(mirrorAgain.body).to.deep.include({ accepted: [], duplicates: [1] });
      const thinking = await call(svc.baseUrl, 'PUT', `/remote/terminals/${t.id}/thinking`, { thinking: true, label: 'compiling' }, cli);
      expect(thinking.body.terminal.thinking).to.include({ thinking: true, label: 'compiling' });
    });

    it('cancel: a waiting poll wakes with the cancelled id, heartbeats list it until the CLI answers cancelled; a queued one is never delivered', async () => {
      const t = await register();
      const a = await send(t.id, 'long job');
      await poll(t.id);
      const waiters = svc.services.streamSignals.waiting;
      const waiting = poll(t.id, 20);
      await waitUntil('the long poll to wait on the stream', async () => svc.services.streamSignals.waiting > waiters, 5_000);
      const cancel = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts/${a.id}/cancel`, undefined, alice.auth);
      expect(cancel.status, cancel.text).to.equal(200);
      expect(cancel.body.prompt.status).to.equal('cancelled');
      const woke = await waiting;
      expect(woke.body).to.deep.include({ prompt: null, cancelledPromptIds: [a.id] });
      const beat = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/heartbeat`, undefined, cli);
      expect(beat.body.cancelledPromptIds).to.deep.equal([a.id]);
      const ack = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts/${a.id}/answer`, { content: 'stopped', status: 'cancelled' }, cli);
      expect(ack.status, ack.text).to.equal(200);
      expect(ack.body.prompt.status).to.equal('cancelled');
      expect((await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/heartbeat`, undefined, cli)).body.cancelledPromptIds).to.deep.equal([]);

      const b = await send(t.id, 'never mind');
      await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts/${b.id}/cancel`, undefined, alice.auth);
      expect((await poll(t.id)).body.prompt).to.equal(null);
      const again = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts/${b.id}/cancel`, undefined, alice.auth);
      expect(again.status).to.equal(200);
    });

    it('SSE streams the thread live and resumes exactly after Last-Event-ID', async () => {
      const t = await register();
      const p = await send(t.id, 'first');
      await poll(t.id);
      const url = `${svc.baseUrl}/remote/terminals/${t.id}/events`;
      const entries = (frames: SseFrame[]) => frames.filter((f) => f.event === 'entry');
      const firstRead = await readSse(url, alice.auth, (frames) => entries(frames).length >= 2);
      expect(firstRead[0]).to.include({ event: 'terminal' });
      expect(entries(firstRead).map((f) => f.data.type)).to.deep.equal(['prompt', 'delivered']);
      const lastId = entries(firstRead)[1].id!;
      expect(lastId).to.equal(String(entries(firstRead)[1].data.seq));

      // While no one listens: steps and an answer. The resumed stream starts right after lastId.
      await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts/${p.id}/steps`, { steps: [{ seq: 0, kind: 'output', content: 'out' }] }, cli);
      const waiters = svc.services.streamSignals.waiting;
      const resumed = readSse(url, { ...alice.auth, 'Last-Event-ID': lastId }, (frames) => entries(frames).length >= 3 && frames.some((f) => f.event === 'ping'));
      await waitUntil('the resumed SSE stream to wait on the stream', async () => svc.services.streamSignals.waiting > waiters, 5_000);
      await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts/${p.id}/answer`, { content: 'done', status: 'completed' }, cli);
      const second = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts`, { content: 'second' }, alice.auth);
      const frames = await resumed;
      const got = entries(frames);
      expect(got.map((f) => f.data.type).slice(0, 3)).to.deep.equal(['step', 'answer', 'prompt']);
      expect(Number(got[0].id)).to.equal(Number(lastId) + 1);
      expect(got[2].data.promptId).to.equal(second.body.prompt.id);
      expect(frames.find((f) => f.event === 'ping')!.id).to.equal(null);
      await waitUntil('SSE waiters released', async () => svc.services.streamSignals.waiting === 0, 5_000);
    });

    it("another user's terminal and prompts answer 404", async () => {
      const t = await register();
      const p = await send(t.id, 'private');
      const bobCli = bob.auth;
      const checks: Array<[string, string, unknown?]> = [
        ['GET', `/remote/terminals/${t.id}`],
        ['GET', `/remote/terminals/${t.id}/thread`],
        ['GET', `/remote/terminals/${t.id}/events`],
        ['GET', `/remote/terminals/${t.id}/prompts/${p.id}`],
        ['POST', `/remote/terminals/${t.id}/prompts`, { content: 'x' }],
        ['POST', `/remote/terminals/${t.id}/prompts/${p.id}/cancel`],
        ['POST', `/remote/terminals/${t.id}/heartbeat`],
        ['DELETE', `/remote/terminals/${t.id}`],
        ['GET', `/remote/terminals/${t.id}/prompts/next?wait=0`],
        ['POST', `/remote/terminals/${t.id}/prompts/${p.id}/steps`, { steps: [{ seq: 0, kind: 'output', content: 'x' }] }],
        ['POST', `/remote/terminals/${t.id}/prompts/${p.id}/answer`, { content: 'x', status: 'completed' }],
        ['POST', `/remote/terminals/${t.id}/mirror`, { entries: [{ seq: 0, role: 'user', content: 'x' }] }],
        ['PUT', `/remote/terminals/${t.id}/thinking`, { thinking: true }],
      ];
      for (const [method, path, body] of checks) {
        const res = await call(svc.baseUrl, method, path, body, bobCli);
        expect(res.status, `${method} ${path}: ${res.text}`).to.equal(404);
        expect(res.body.error.code).to.equal('TERMINAL_NOT_FOUND');
      }
      const list = await call(svc.baseUrl, 'GET', '/remote/terminals', undefined, bob.auth);
      expect(list.body.items).to.deep.equal([]);
      const unknownPrompt = await call(svc.baseUrl, 'POST', `/remote/terminals/${t.id}/prompts/nope/cancel`, undefined, alice.auth);
      expect(unknownPrompt.status).to.equal(404);
      expect(unknownPrompt.body.error.code).to.equal('PROMPT_NOT_FOUND');
      const anonymous = await call(svc.baseUrl, 'GET', '/remote/terminals');
      expect(anonymous.status).to.equal(401);
    });

    it('the OpenAPI document lists the remote-control operations', async () => {
      const doc = (await call(svc.baseUrl, 'GET', '/openapi.json')).body;
      for (const path of ['/remote/terminals', '/remote/terminals/{terminalId}/heartbeat', '/remote/terminals/{terminalId}/prompts/next', '/remote/terminals/{terminalId}/events', '/remote/terminals/{terminalId}/thread', '/remote/terminals/{terminalId}/prompts/{promptId}/cancel']) {
        expect(Object.keys(doc.paths), path).to.include(path);
      }
    });
  });
}
