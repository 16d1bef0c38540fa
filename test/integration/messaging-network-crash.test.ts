import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executeSessionCommand } from '../../commands/messaging.js';
import { msgSessionStreamId } from '../../domain/messaging/index.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { registerUser } from '../support/identity.js';
import { messagingClient } from '../support/messaging-client.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes, waitUntil } from '../support/test-service.js';

/**
 * The embedded network after a SIGKILL: messages sent but not yet delivered (in the log, never
 * handled), and one whose delivery was cut halfway (received by B, ack SERVER recorded, DEVICE not),
 * are all delivered after a restart on the same data, each exactly once on the recipient's stream,
 * with acks SERVER then DEVICE once each. The consumer's commands are idempotent, so the replay of
 * an event it had partly handled changes nothing it already did.
 */
const context = () => ({ actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() });

for (const mode of availableModes()) {
  describe(`messaging embedded network survives a killed worker (${mode})`, function () {
    this.timeout(120_000);
    let dataDir: string;
    const started: ServiceProcess[] = [];
    after(async () => {
      for (const p of started) {
        if (p.child.exitCode === null && p.child.signalCode === null) {
          p.child.kill('SIGTERM');
          await p.exited;
        }
      }
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('delivers every pending message exactly once after a restart', async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-msg-crash-'));
      const id = randomBytes(4).toString('hex');
      const env: Record<string, string> = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_AUTH_PER_MINUTE: '1000', JWT_SECRET: `messaging-crash-secret-${id}-0123456789abcdef` };
      if (mode === 'distributed') {
        Object.assign(env, { MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `msg_crash_${id}`, KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `msg-crash-${id}` });
      }
      const first = await startServiceProcess(env);
      started.push(first);
      const user = await registerUser(first.baseUrl);
      let client = messagingClient(first.baseUrl, user.auth);
      const a = await client.createSession('A');
      const b = await client.createSession('B');
      // Some sent through the API right before the kill: the worker may or may not have handled them.
      const viaApi: string[] = [];
      for (let i = 0; i < 5; i++) viaApi.push((await client.send(a.id, b.address, `api ${i}`)).id);
      first.child.kill('SIGKILL');
      expect((await first.exited).signal).to.equal('SIGKILL');

      // While it is down: messages in the log that no worker handled yet, and one cut halfway.
      const store = new SqliteEventStore(join(dataDir, 'events.db'));
      const pending: string[] = [];
      try {
        for (let i = 0; i < 10; i++) {
          const messageId = randomUUID();
          pending.push(messageId);
          const at = new Date().toISOString();
          await executeSessionCommand(store, context(), a.id, {
            type: 'RecordSent',
            message: { id: messageId, chatId: b.address, from: a.address, to: b.address, text: `pending ${i}`, timestamp: at, fromMe: true, replyTo: null, groupId: null },
          });
        }
        const half = pending[0];
        await executeSessionCommand(store, context(), a.id, { type: 'ChangeAck', messageId: half, ack: 'SERVER' });
        await executeSessionCommand(store, context(), b.id, {
          type: 'RecordReceived',
          message: { id: half, chatId: a.address, from: a.address, to: b.address, text: 'pending 0', timestamp: new Date().toISOString(), fromMe: false, replyTo: null, groupId: null },
        });
      } finally {
        await store.close();
      }

      const second = await startServiceProcess(env);
      started.push(second);
      client = messagingClient(second.baseUrl, user.auth);
      const all = [...viaApi, ...pending];
      await waitUntil(
        'every message delivered (DEVICE at A)',
        async () => {
          const page = await client.messages(a.id, b.address, '?limit=100');
          return all.every((m) => page.items.find((x) => x.id === m)?.ack === 'DEVICE');
        },
        60_000,
      );
      const atB = await client.messages(b.id, a.address, '?limit=100');
      expect(atB.items.map((m) => m.id)).to.have.members(all);

      second.child.kill('SIGTERM');
      await second.exited;
      const check = new SqliteEventStore(join(dataDir, 'events.db'));
      try {
        const received = (await check.readStream(msgSessionStreamId(b.id))).filter((e) => e.type === 'MessageReceived').map((e) => (e.data as { message: { id: string } }).message.id);
        expect(received).to.have.length(all.length);
        expect(new Set(received).size).to.equal(all.length);
        const acks = (await check.readStream(msgSessionStreamId(a.id))).filter((e) => e.type === 'MessageAckChanged').map((e) => e.data as { messageId: string; ack: string });
        for (const m of all) expect(acks.filter((x) => x.messageId === m).map((x) => x.ack), m).to.deep.equal(['SERVER', 'DEVICE']);
      } finally {
        await check.close();
      }
    });
  });
}
