import { expect } from 'chai';
import { registerUser } from '../support/identity.js';
import { messagingClient } from '../support/messaging-client.js';
import { DistributedProcessGroup, type ServiceProcess } from '../support/service-process.js';
import { availableModes } from '../support/test-service.js';

/**
 * The embedded network across processes: the API process records MessageSent, the worker process
 * delivers it (MessageReceived on the recipient's stream, acks on the sender's) through Kafka, the
 * projector process serves the chats. Nothing is shared in memory.
 */
const distributed = availableModes().includes('distributed');
if (!distributed) console.log('SKIP messaging split roles: needs the distributed adapters (MONGODB_URL, KAFKA_BROKERS)');

(distributed ? describe : describe.skip)('messaging embedded network across split roles (api, projector, worker)', function () {
  this.timeout(120_000);
  let group: DistributedProcessGroup | null = null;
  after(async () => {
    await group?.stop();
  });

  it('delivers, acknowledges and sends read receipts between sessions through the worker process', async () => {
    group = new DistributedProcessGroup('msgroles');
    const env = group.env({});
    const started = await group.start(env, ['api', 'projector', 'worker']);
    const [api] = started;
    const user = await registerUser(api.baseUrl);
    const client = messagingClient(api.baseUrl, user.auth);
    const a = await client.createSession('A');
    const b = await client.createSession('B');
    expect(a.status).to.equal('WORKING');
    const sent = await client.send(a.id, b.address, 'across processes');
    expect(sent.ack).to.equal('PENDING');
    const received = await client.waitForMessage(b.id, a.address, sent.id);
    expect(received).to.include({ text: 'across processes', from: a.address });
    await client.waitForAck(a.id, b.address, sent.id, 'DEVICE');
    const read = await client.api('POST', `/messaging/sessions/${b.id}/chats/${a.address}/read`, { all: true });
    expect(read.status, read.text).to.equal(200);
    await client.waitForAck(a.id, b.address, sent.id, 'READ');
  });
});
