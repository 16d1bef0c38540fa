import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes, waitUntil } from '../support/test-service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Webhooks with the roles in separate processes (api, projector, worker on Kafka + MongoDB): the
 * worker process delivers what the API process was asked, and a redelivery requested through the
 * API process reaches the worker's timer wheel through the bus, not through shared memory.
 */
const distributed = availableModes().includes('distributed');
if (!distributed) console.log('SKIP webhooks across split roles: needs the distributed adapters (MONGODB_URL, KAFKA_BROKERS)');

(distributed ? describe : describe.skip)('messaging webhooks across split roles (api, projector, worker)', function () {
  this.timeout(120_000);
  const processes: ServiceProcess[] = [];
  let dataDir: string;
  let receiver: WebhookReceiver | null = null;
  after(async () => {
    for (const p of processes) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers from the worker process and redelivers on a request made to the api process', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-webhooks-roles-'));
    const id = randomBytes(4).toString('hex');
    const env = {
      DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ALLOW_PRIVATE_NETWORK: 'true',
      MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `webhooks_roles_${id}`,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `webhooks-roles-${id}`,
      JWT_SECRET: `webhooks-roles-secret-${id}-0123456789abcdef`,
    };
    const [api, projector, worker] = await Promise.all((['api', 'projector', 'worker'] as const).map((role) => startServiceProcess(env, ['--role', role])));
    processes.push(api, projector, worker);

    const secret = `roles-${id}`;
    let accept = false;
    receiver = await startWebhookReceiver(secret, () => (accept ? { status: 200 } : { status: 400 }));
    const user = await registerUser(api.baseUrl);
    const as = (method: string, path: string, body?: unknown) => call(api.baseUrl, method, path, body, user.auth);
    const sessions = [];
    for (const name of ['sender', 'target']) {
      const res = await as('POST', '/messaging/sessions', { name: `${name}-${id}` });
      expect(res.status, res.text).to.equal(201);
      sessions.push(res.body.session as { id: string; address: string });
    }
    const [sender, target] = sessions;
    expect((await as('POST', `/messaging/sessions/${target.id}/webhook`, { url: receiver.url, events: ['message'], secret })).status).to.equal(200);
    expect((await as('POST', `/messaging/sessions/${sender.id}/messages`, { chatId: target.address, text: 'across roles' })).status).to.equal(201);

    const failed = await waitUntil('the refused delivery to be failed', async () => {
      const res = await as('GET', `/messaging/sessions/${target.id}/webhook/deliveries`);
      return res.body.items?.[0]?.status === 'failed' ? res.body.items[0] : null;
    }, 60_000);
    accept = true;
    const again = await as('POST', `/messaging/sessions/${target.id}/webhook/deliveries/${failed.id}/redeliver`);
    expect(again.status, again.text).to.equal(202);
    const accepted = await receiver.waitFor('the redelivery', () => receiver!.accepted().get(failed.webhookId), 30_000);
    expect(accepted.verified).to.equal(true);
    expect(accepted.payload!.data.text).to.equal('across roles');
  });
});
