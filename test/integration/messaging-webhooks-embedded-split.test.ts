import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const MESSAGES = 3;

/**
 * A worker on the embedded adapters in its own process (SQLite log shared with the api process,
 * in-memory read store): it projects nothing, so its recovery sweep must find pending deliveries in
 * the event log. Retries pending when the worker is killed (SIGKILL) are made by the restarted worker,
 * whose bus checkpoint is already past the events that scheduled them.
 */
describe('messaging webhooks: a split worker on the in-memory read store recovers from the log', function () {
  this.timeout(120_000);
  const processes: ServiceProcess[] = [];
  let dataDir: string;
  let receiver: WebhookReceiver | null = null;
  after(async () => {
    for (const p of processes) {
      if (p.child.exitCode === null && p.child.signalCode === null) {
        p.child.kill('SIGTERM');
        await p.exited;
      }
    }
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers after the worker is killed and restarted, same webhook-id', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-webhooks-embedded-split-'));
    const id = randomBytes(4).toString('hex');
    const env = {
      DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ALLOW_PRIVATE_NETWORK: 'true',
      JWT_SECRET: `webhooks-embedded-split-${id}-0123456789abcdef`,
      WEBHOOK_MAX_ATTEMPTS: '50', WEBHOOK_RETRY_BASE_MS: '300', WEBHOOK_RETRY_FACTOR: '1.2', WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_FAILURE_THRESHOLD: '100', WEBHOOK_SWEEP_INTERVAL_MS: '300', WEBHOOK_RECOVERY_GRACE_MS: '1000',
    };
    const start = async (role: 'api' | 'worker') => {
      const p = await startServiceProcess(env, ['--role', role]);
      processes.push(p);
      return p;
    };
    const api = await start('api');
    const worker = await start('worker');

    const secret = `split-${id}`;
    let healthy = false;
    receiver = await startWebhookReceiver(secret, () => (healthy ? { status: 200 } : { status: 503 }));
    const r = receiver;
    const user = await registerUser(api.baseUrl);
    const as = (method: string, path: string, body?: unknown) => call(api.baseUrl, method, path, body, user.auth);
    const sessions: Array<{ id: string; address: string }> = [];
    for (const name of ['sender', 'target']) {
      const res = await as('POST', '/messaging/sessions', { name: `${name}-${id}` });
      expect(res.status, res.text).to.equal(201);
      sessions.push(res.body.session);
    }
    const [sender, target] = sessions;
    expect((await as('POST', `/messaging/sessions/${target.id}/webhook`, { url: r.url, events: ['message'], secret })).status).to.equal(200);
    for (let i = 0; i < MESSAGES; i++) {
      expect((await as('POST', `/messaging/sessions/${sender.id}/messages`, { chatId: target.address, text: `split ${i}` })).status).to.equal(201);
    }
    // Every delivery was attempted (and refused) by the worker process: retries are pending.
    const seen = await r.waitFor(`${MESSAGES} first attempts`, () => {
      const ids = new Set(r.received.map((d) => d.webhookId));
      return ids.size === MESSAGES ? ids : null;
    }, 30_000);

    worker.child.kill('SIGKILL');
    expect((await worker.exited).signal).to.equal('SIGKILL');
    healthy = true;
    await start('worker');

    const accepted = await r.waitFor('every delivery accepted after the worker restarted', () => (r.accepted().size === MESSAGES ? r.accepted() : null), 60_000);
    expect(new Set(accepted.keys())).to.deep.equal(seen);
    expect(r.received.every((d) => d.verified)).to.equal(true);
    expect([...accepted.values()].map((d) => d.payload!.data.text).sort()).to.deep.equal([...Array(MESSAGES).keys()].map((i) => `split ${i}`));
  });
});
