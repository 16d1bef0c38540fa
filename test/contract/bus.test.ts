import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { EmbeddedBus } from '../../infra/bus/embedded.js';
import { KafkaBus } from '../../infra/bus/kafka.js';
import { SqliteCheckpointStore } from '../../infra/checkpoints/sqlite.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { Logger } from '../../ports/logger.js';
import { appendRound, busContract, memorySink, waitUntil } from './bus.contract.js';

// Dead-letter warnings are expected here; the contract asserts behaviour, not log lines.
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
// Fast handler retries keep the retry and dead-letter cases quick; the policy itself is the same.
const retry = { baseDelayMs: 20, maxDelayMs: 100 };

function sqliteStore() {
  const dir = mkdtempSync(join(tmpdir(), 'bus-contract-'));
  const eventStore = new SqliteEventStore(join(dir, 'events.db'));
  const checkpoints = new SqliteCheckpointStore(eventStore.db);
  const cleanup = async () => {
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { eventStore, checkpoints, cleanup };
}

busContract('embedded (SQLite event store)', async () => {
  const { eventStore, checkpoints, cleanup } = sqliteStore();
  const deadLetters = memorySink();
  return { bus: new EmbeddedBus(eventStore, checkpoints, silent, { retry, deadLetters }), eventStore, deadLetters, cleanup };
});

const brokers = process.env.KAFKA_BROKERS?.split(',').map((b) => b.trim()).filter(Boolean);
if (brokers?.length) {
  busContract('kafka (relay from a SQLite event store)', async () => {
    const { eventStore, checkpoints, cleanup } = sqliteStore();
    // A prefix per run keeps test topics apart from a real deployment's and lets cleanup find them.
    const topicPrefix = `bustest${Math.random().toString(36).slice(2, 8)}`;
    const deadLetters = memorySink();
    const bus = new KafkaBus({
      brokers,
      clientId: 'bus-contract',
      topicPrefix,
      partitions: 3,
      logger: silent,
      retry,
      deadLetters,
      kafkaLogLevel: logLevel.NOTHING,
      relay: { eventStore, checkpoints },
      consumer: { maxWaitTimeInMs: 250 },
      reconnectBaseMs: 100,
      reconnectMaxMs: 1_000,
    });
    bus.startRelay();
    return {
      bus,
      eventStore,
      deadLetters,
      async cleanup() {
        const admin = bus.kafka.admin();
        try {
          await admin.connect();
          const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${topicPrefix}.`));
          if (topics.length) await admin.deleteTopics({ topics });
          const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(`${topicPrefix}.`));
          if (groups.length) await admin.deleteGroups(groups);
        } catch (err) {
          console.warn(`bus contract: cleanup of ${topicPrefix}.* failed: ${(err as Error).message}`);
        } finally {
          await admin.disconnect();
          await cleanup();
        }
      },
    };
  });

  // The layout is a published contract for subscribers outside this service (kafka-topics.ts).
  describe('Kafka topic layout', function () {
    this.timeout(30_000);
    it('publishes to <prefix>.events.<category>: key = stream id, value = the RecordedEvent, string headers', async () => {
      const { eventStore, checkpoints, cleanup } = sqliteStore();
      const prefix = `layout${Math.random().toString(36).slice(2, 8)}`;
      const topic = `${prefix}.events.lay`;
      const bus = new KafkaBus({ brokers, clientId: 'layout', topicPrefix: prefix, logger: silent, kafkaLogLevel: logLevel.NOTHING, relay: { eventStore, checkpoints } });
      const raw = new Kafka({ clientId: 'layout-reader', brokers, logLevel: logLevel.NOTHING });
      const reader = raw.consumer({ groupId: `${prefix}.reader`, maxWaitTimeInMs: 250 });
      const admin = raw.admin();
      try {
        await appendRound(eventStore, ['lay-s1', 'lay-s2'], 2);
        bus.startRelay();
        await waitUntil(() => bus.relayStatus()!.position === 4, () => 'the relay to publish 4 events');
        const messages: KafkaMessage[] = [];
        await reader.connect();
        await reader.subscribe({ topics: [topic], fromBeginning: true });
        await reader.run({ eachMessage: async ({ message }) => void messages.push(message) });
        await waitUntil(() => messages.length === 4, () => `4 messages on ${topic} (have ${messages.length})`);

        const stored = await eventStore.readAll();
        for (const message of messages) {
          const event = stored.find((e) => e.id === message.headers?.['event-id']?.toString())!;
          expect(message.key?.toString()).to.equal(event.streamId);
          expect(JSON.parse(message.value!.toString())).to.deep.equal(event);
          const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, v?.toString()]));
          expect(headers).to.deep.equal({
            'event-id': event.id,
            'event-type': event.type,
            'stream-id': event.streamId,
            revision: String(event.revision),
            position: String(event.position),
            'schema-version': String(event.schemaVersion),
          });
        }
        await admin.connect();
        const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
        expect(meta.partitions).to.have.length(3);
      } finally {
        await reader.disconnect();
        await bus.close();
        await admin.connect().catch(() => undefined);
        await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
        await admin.deleteGroups([`${prefix}.reader`]).catch(() => undefined);
        await admin.disconnect();
        await cleanup();
      }
    });
  });

  // A message on our topics that is no event (another producer's, a corrupted one) must not be only a log line.
  describe('Kafka: undecodable messages', function () {
    this.timeout(60_000);
    it('dead-letters them with their raw bytes once stored (sink retried), commits past them, and goes on', async () => {
      const { eventStore, checkpoints, cleanup } = sqliteStore();
      const prefix = `undec${Math.random().toString(36).slice(2, 8)}`;
      const topic = `${prefix}.events.und`;
      const deadLetters = memorySink();
      const bus = new KafkaBus({
        brokers, clientId: 'undecodable', topicPrefix: prefix, partitions: 1, logger: silent, retry, deadLetters, kafkaLogLevel: logLevel.NOTHING,
        relay: { eventStore, checkpoints }, consumer: { maxWaitTimeInMs: 250 },
      });
      const raw = new Kafka({ clientId: 'undecodable-producer', brokers, logLevel: logLevel.NOTHING });
      const producer = raw.producer();
      const admin = raw.admin();
      const seen: string[] = [];
      const consumer = { name: 'und-reader', categories: ['und'], async handle(e: { id: string }) { seen.push(e.id); } };
      try {
        bus.startRelay();
        const [before] = await appendRound(eventStore, ['und-s1'], 1);
        let running = await bus.start(consumer);
        await waitUntil(() => seen.includes(before), () => 'the first event handled');
        deadLetters.failing = 2; // the event store down at first: the letter is retried, not dropped
        await producer.connect();
        const garbage = Buffer.from([0x7b, 0x00, 0xff]);
        await producer.send({ topic, messages: [{ key: 'k1', value: garbage }, { key: null, value: null }] });
        const [after] = await appendRound(eventStore, ['und-s1'], 1, 1);
        await waitUntil(() => seen.includes(after), () => 'the event after the garbage handled');
        const letters = deadLetters.recorded.filter((l) => l.kind === 'undecodable');
        expect(letters).to.have.length(2);
        const [first, second] = letters;
        if (first.kind !== 'undecodable' || second.kind !== 'undecodable') throw new Error('unreachable');
        expect(first).to.include({ consumer: 'und-reader', topic, partition: 0 });
        expect(first.value).to.deep.equal(garbage);
        expect(first.key?.toString()).to.equal('k1');
        expect(first.error).to.be.a('string').and.not.equal('');
        expect(second.value).to.equal(null);
        expect(second.error).to.equal('kafka message without a value');
        expect(BigInt(second.offset)).to.equal(BigInt(first.offset) + 1n);
        expect(deadLetters.failing).to.equal(0);

        // Committed past: a restarted consumer of the same group records them no second time.
        await running.stop();
        const [third] = await appendRound(eventStore, ['und-s1'], 1, 2);
        running = await bus.start(consumer);
        await waitUntil(() => seen.includes(third), () => 'the event after the restart handled');
        expect(deadLetters.recorded.filter((l) => l.kind === 'undecodable')).to.have.length(2);
        await running.stop();
      } finally {
        await producer.disconnect().catch(() => undefined);
        await bus.close();
        await admin.connect().catch(() => undefined);
        await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
        await admin.deleteGroups([`${prefix}.und-reader`]).catch(() => undefined);
        await admin.disconnect();
        await cleanup();
      }
    });
  });
} else if (process.env.REQUIRE_SERVERS === 'true') {
  describe('Bus contract: kafka', () => {
    it('needs a broker', () => {
      throw new Error('KAFKA_BROKERS is required when REQUIRE_SERVERS=true');
    });
  });
} else {
  console.log('SKIP bus contract on Kafka: KAFKA_BROKERS is not set');
}
