import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { login, registerUser } from '../support/identity.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes, waitUntil } from '../support/test-service.js';

/**
 * The service killed (SIGKILL) in the middle of an agent turn: after a restart on the same data
 * nothing acknowledged is lost — the session, its earlier turns, the interrupted turn's message
 * and the text streamed before the crash — and the interrupted turn ends with finishReason
 * `interrupted` (at once in embedded mode, after its deadline plus AGENTS_RECOVERY_GRACE_MS with
 * several processes), so the session takes messages again.
 */
for (const mode of availableModes()) {
  describe(`agent session survives a killed service (${mode})`, function () {
    this.timeout(90_000);
    let dataDir: string;
    let env: Record<string, string>;
    const started: ServiceProcess[] = [];
    const start = async () => {
      const p = await startServiceProcess(env);
      started.push(p);
      return p;
    };

    beforeEach(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-agents-crash-'));
      env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_AUTH_PER_MINUTE: '1000', AGENTS_RECOVERY_GRACE_MS: '0' };
      if (mode === 'distributed') {
        const id = randomBytes(4).toString('hex');
        Object.assign(env, { MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `agents_crash_${id}`, KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `agents-crash-${id}` });
      }
    });
    afterEach(async () => {
      for (const p of started.splice(0)) {
        if (p.child.exitCode === null && p.child.signalCode === null) {
          p.child.kill('SIGTERM');
          await p.exited;
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('a turn interrupted by the crash ends as interrupted with its partial text; earlier turns and the session survive', async () => {
      const first = await start();
      const user = await registerUser(first.baseUrl);
      const as = (base: string, auth: Record<string, string>, method: string, path: string, body?: unknown) => call(base, method, path, body, auth);
      // A short timeout so that, with several processes, the deadline passes soon after the restart.
      const agent = (await as(first.baseUrl, user.auth, 'POST', '/agents', { name: 'A', provider: 'offline', model: 'offline', limits: { timeoutMs: 2000 } })).body.agent;
      const session = (await as(first.baseUrl, user.auth, 'POST', `/agents/${agent.id}/sessions`, {})).body.session;
      const done = await as(first.baseUrl, user.auth, 'POST', `/agents/${agent.id}/sessions/${session.id}/messages`, { content: 'first turn' });
      expect(done.body.message.answer.finishReason).to.equal('stop');
      // A slow turn, streamed: kill the service once some text is in the log.
      void fetch(`${first.baseUrl}/agents/${agent.id}/sessions/${session.id}/messages`, {
        method: 'POST',
        headers: { ...user.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ content: `slow 200\n${'word '.repeat(50)}`, stream: true }),
      }).then((r) => r.text()).catch(() => undefined);
      const path = `/agents/${agent.id}/sessions/${session.id}`;
      await waitUntil('some text streamed', async () => (await as(first.baseUrl, user.auth, 'GET', path)).body.session.messages[1]?.answer.text.length > 8);
      first.child.kill('SIGKILL');
      expect((await first.exited).signal).to.equal('SIGKILL');

      const second = await start();
      const auth = (await login(second.baseUrl, user.email, user.password)).auth!;
      const got = await waitUntil('the turn ended as interrupted', async () => {
        const res = await as(second.baseUrl, auth, 'GET', path);
        return res.body?.session?.messages?.[1]?.answer.finishReason === 'interrupted' ? res.body.session : null;
      }, 30_000);
      expect(got.messages).to.have.length(2);
      expect(got.messages[0].answer).to.include({ finishReason: 'stop', text: 'first turn' });
      expect(got.messages[1].answer.text).to.match(/^word word/);
      expect(got.running).to.equal(null);
      const next = await as(second.baseUrl, auth, 'POST', `/agents/${agent.id}/sessions/${session.id}/messages`, { content: 'after the crash' });
      expect(next.status, next.text).to.equal(200);
      expect(next.body.message.context.includedMessageIds).to.deep.equal([got.messages[0].id, got.messages[1].id]);
    });
  });
}
