import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { DistributedProcessGroup, type ServiceProcess } from '../support/service-process.js';
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
  let group: DistributedProcessGroup | null = null;
  let receiver: WebhookReceiver | null = null;
  after(async () => {
    await group?.stop();
    await receiver?.close();
  });

  it('delivers from the worker process and redelivers on a request made to the api process', async () => {
    group = new DistributedProcessGroup('webhooks_roles');
    const id = group.id;
    const env = group.env({ ALLOW_PRIVATE_NETWORK: 'true' });
    const [api, projector, worker] = await group.start(env, ['api', 'projector', 'worker']);

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
