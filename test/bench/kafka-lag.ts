/**
 * 3b. Append-to-visible lag through Kafka: SQLite event store → KafkaRelay → topic → a KafkaBus
 * consumer (the same wiring as test/contract/bus.test.ts). Sequential appends; for each, the time
 * from just before `append` to the consumer's handler receiving the event. Needs KAFKA_BROKERS.
 */
import { randomUUID } from 'node:crypto';
import { logLevel } from 'kafkajs';
import { KafkaBus } from '../../infra/bus/kafka.js';
import { SqliteCheckpointStore } from '../../infra/checkpoints/sqlite.js';
import type { RunningConsumer } from '../../ports/bus.js';
import { embeddedEventStore, latency, now, silentLogger, tempDir, type Report } from './support.js';

const BENCH = '3 append-to-visible lag';

export async function benchKafkaLag(report: Report, events = 500): Promise<void> {
  const brokers = process.env.KAFKA_BROKERS?.split(',').map((b) => b.trim()).filter(Boolean);
  if (!brokers?.length) {
    report.skip(BENCH, 'through Kafka: append → consumer received, p50 / p99', 'KAFKA_BROKERS is not set');
    return;
  }
  const dir = tempDir('kafka');
  const { raw, store: eventStore } = embeddedEventStore(dir.path);
  const checkpoints = new SqliteCheckpointStore(raw.db);
  const topicPrefix = `bench${Math.random().toString(36).slice(2, 8)}`;
  const bus = new KafkaBus({
    brokers,
    clientId: 'bench',
    topicPrefix,
    partitions: 3,
    logger: silentLogger,
    kafkaLogLevel: logLevel.NOTHING,
    relay: { eventStore, checkpoints },
    reconnectBaseMs: 100,
    reconnectMaxMs: 1_000,
  });
  const waiting = new Map<string, (at: number) => void>();
  let consumer: RunningConsumer | null = null;
  try {
    bus.startRelay();
    consumer = await bus.start({
      name: 'bench-lag',
      categories: ['benchlag'],
      async handle(event) {
        const at = now();
        waiting.get(event.id)?.(at);
      },
    });
    const ping = async (timeoutMs: number) => {
      const id = randomUUID();
      let timer: NodeJS.Timeout | undefined;
      const received = new Promise<number>((resolve, reject) => {
        waiting.set(id, resolve);
        timer = setTimeout(() => reject(new Error(`event not received within ${timeoutMs} ms`)), timeoutMs);
      });
      const t0 = now();
      await eventStore.append(`benchlag-${id.slice(0, 8)}`, [{ id, type: 'BenchPing', data: { at: new Date().toISOString() }, metadata: { actorId: null, orgId: null, workspaceId: null, correlationId: id, causationId: null, requestId: null, occurredAt: new Date().toISOString() } }], 'no_stream');
      const t1 = now();
      try {
        const t2 = await received;
        return { total: t2 - t0, afterAppend: t2 - t1 };
      } finally {
        clearTimeout(timer);
        waiting.delete(id);
      }
    };
    // The first event also waits for topic creation and the consumer group join.
    const joinStarted = now();
    await ping(60_000);
    report.info(BENCH, `Kafka consumer group joined and first event received after ${Math.round(now() - joinStarted)} ms`);
    for (let i = 0; i < 50; i++) await ping(10_000); // warm-up

    const total = new Float64Array(events);
    const afterAppend = new Float64Array(events);
    for (let i = 0; i < events; i++) {
      const r = await ping(10_000);
      total[i] = r.total;
      afterAppend[i] = r.afterAppend;
    }
    const t = latency(total);
    report.figure(BENCH, `through Kafka: append → consumer received (${events} sequential, relay + KafkaBus), p50`, t.p50, 'ms', { digits: 2 });
    report.figure(BENCH, 'through Kafka: append → consumer received, p99', t.p99, 'ms', { digits: 2, note: `max ${t.max.toFixed(1)} ms` });
  } finally {
    await withTimeout(
      (async () => {
        await consumer?.stop();
        await bus.close();
        const admin = bus.kafka.admin();
        try {
          await admin.connect();
          const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${topicPrefix}.`));
          if (topics.length) await admin.deleteTopics({ topics });
          const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(`${topicPrefix}.`));
          if (groups.length) await admin.deleteGroups(groups);
        } finally {
          await admin.disconnect();
        }
      })(),
      20_000,
    ).catch((err) => report.info(BENCH, `Kafka cleanup of ${topicPrefix}.* incomplete: ${(err as Error).message}`));
    await eventStore.close();
    dir.cleanup();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]);
}
