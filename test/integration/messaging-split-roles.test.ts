import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { registerUser } from '../support/identity.js';
import { messagingClient } from '../support/messaging-client.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
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
  const processes: ServiceProcess[] = [];
  let dataDir: string;
  after(async () => {
    for (const p of processes) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers, acknowledges and sends read receipts between sessions through the worker process', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-msg-roles-'));
    const id = randomBytes(4).toString('hex');
    const env = {
      DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn',
      MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `msgroles_${id}`,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `msgroles-${id}`,
      JWT_SECRET: `messaging-roles-secret-${id}-0123456789abcdef`, RATE_LIMIT_AUTH_PER_MINUTE: '1000',
    };
    const started = await Promise.all((['api', 'projector', 'worker'] as const).map((role) => startServiceProcess(env, ['--role', role])));
    processes.push(...started);
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
