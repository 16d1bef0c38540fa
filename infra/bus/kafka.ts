import { Kafka, logLevel, type Admin, type Consumer as KafkaConsumer, type ConsumerConfig, type KafkaConfig, type logCreator } from 'kafkajs';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { Bus, Consumer, RunningConsumer } from '../../ports/bus.js';
import type { EventStore } from '../../ports/event-store.js';
import type { Logger } from '../../ports/logger.js';
import type { CheckpointStore } from '../../ports/read-store.js';
import { KafkaRelay, type RelayStatus } from './kafka-relay.js';
import { decodeEvent, ensureTopics, topicFor, DEFAULT_PARTITIONS, DEFAULT_TOPIC_PREFIX } from './kafka-topics.js';
import { noDelaySocketFactory } from './kafka-socket.js';
import { handleKeyedBatch } from './keyed-batch.js';
import { RelayLeader, type LeaderStatus } from './relay-leader.js';
import type { LeaseStore } from '../../ports/lease.js';
import type { DeadLetterSink } from '../../ports/dead-letters.js';
import { backoffDelay } from '../../lib/backoff.js';
import { sleep } from '../../lib/sleep.js';
import { deadLetterUndecodable, handleWithRetry, retryPolicy, type RetryPolicy } from './retry-handler.js';

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  topicPrefix?: string;
  partitions?: number;
  replicationFactor?: number;
  logger: Logger;
  /** Given: this bus can run the relay (`startRelay()`); the composition root picks the process. */
  relay?: {
    eventStore: EventStore;
    checkpoints: CheckpointStore;
    maxBatchEvents?: number;
    /** Given: the relay runs only while this process holds the relay lease (failover between workers). */
    lease?: { store: LeaseStore; holder: string; failoverMs: number };
  };
  /** Handler retries before an event is dead-lettered (see retry-handler.ts). */
  retry?: Partial<RetryPolicy>;
  /** Where dead letters are recorded; `detail()` adds their count to health. */
  deadLetters?: DeadLetterSink & { detail?(): string };
  /** kafkajs' own log threshold; its entries go to `logger` (default WARN). */
  kafkaLogLevel?: logLevel;
  /** Extra kafkajs client settings: ssl, sasl, timeouts, socketFactory. */
  client?: Partial<KafkaConfig>;
  consumer?: Partial<Pick<ConsumerConfig, 'sessionTimeout' | 'heartbeatInterval' | 'rebalanceTimeout' | 'maxWaitTimeInMs'>>;
  /** Backoff between attempts to (re)build a consumer or the relay's producer. */
  reconnectBaseMs?: number;
  reconnectMaxMs?: number;
}

// kafkajs entries that are expected by design here, demoted to debug:
// - bounded producer retries are deliberate: the relay rebuilds the producer and re-sends from
//   its checkpoint, accepting duplicates (never loss or reordering of first deliveries);
// - CreateTopics answering "already exists" when two clients ensure the same topic.
const EXPECTED = [/^Limiting retries for the idempotent producer/, /^Response CreateTopics/];

/** Routes kafkajs' entries into our logger. Its errors become warnings: we log outcomes ourselves. */
export function kafkaLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, timestamp: _t, logger: _l, ...extra } = log as { message: string; timestamp?: string; logger?: string };
      const entry = { kafkajs: namespace, ...extra };
      if (EXPECTED.some((re) => re.test(message))) logger.debug(entry, message);
      else if (level <= logLevel.WARN) logger.warn(entry, message);
      else if (level === logLevel.INFO) logger.info(entry, message);
      else logger.debug(entry, message);
    };
}

/**
 * Bus over Kafka: the relay publishes the event log to one topic per category (see
 * kafka-topics.ts); each consumer is a kafkajs consumer group `<prefix>.<consumer name>`
 * reading its categories' topics. Per-stream order comes from key = stream id (one partition
 * per stream) and one handler at a time per stream (keyed-batch.ts; `Consumer.concurrency` streams
 * at once). Offsets are resolved in partition order only after the handlers resolved, so delivery
 * is at least once, and also after rebalances.
 */
export class KafkaBus implements Bus {
  readonly adapter = 'kafka';
  readonly kafka: Kafka;
  private readonly log: Logger;
  private readonly prefix: string;
  private readonly policy: RetryPolicy;
  private readonly running = new Set<RunningConsumer>();
  private readonly relay: KafkaRelay | null;
  private readonly leader: RelayLeader | null = null;
  private admin: Promise<Admin> | null = null;

  constructor(private readonly options: KafkaBusOptions) {
    this.log = options.logger.child({ bus: 'kafka' });
    this.prefix = options.topicPrefix ?? DEFAULT_TOPIC_PREFIX;
    this.policy = retryPolicy(options.retry);
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: options.kafkaLogLevel ?? logLevel.WARN,
      logCreator: kafkaLogCreator(this.log),
      connectionTimeout: 3_000,
      // kafkajs retries inside one operation; our loops retry the operation, so keep these short.
      retry: { initialRetryTime: 200, maxRetryTime: 5_000, retries: 5 },
      socketFactory: noDelaySocketFactory,
      ...options.client,
    });
    const lease = options.relay?.lease;
    this.relay = options.relay
      ? new KafkaRelay({
          kafka: this.kafka,
          eventStore: options.relay.eventStore,
          checkpoints: options.relay.checkpoints,
          logger: this.log,
          topicPrefix: this.prefix,
          topics: this.topicSettings(),
          maxBatchEvents: options.relay.maxBatchEvents,
          retryBaseMs: options.reconnectBaseMs,
          retryMaxMs: options.reconnectMaxMs,
          mayPublish: lease ? () => this.leader?.fence() ?? false : undefined,
        })
      : null;
    if (this.relay && lease) {
      this.leader = new RelayLeader(this.relay, { leases: lease.store, holder: lease.holder, failoverMs: lease.failoverMs, logger: this.log });
    }
  }

  /** Starts publishing the event log (returns at once; retries in the background). */
  startRelay(): void {
    if (!this.relay) throw new Error('KafkaBus was built without relay options');
    if (this.leader) this.leader.start();
    else this.relay.start();
  }

  relayStatus(): (RelayStatus & { lease: LeaderStatus | null }) | null {
    return this.relay ? { ...this.relay.status(), lease: this.leader?.status() ?? null } : null;
  }

  /** Returns at once: a broker that is down delays consumption, it does not fail the caller. */
  async start(consumer: Consumer): Promise<RunningConsumer> {
    if (consumer.categories.length === 0) throw new Error(`consumer ${consumer.name}: no categories to consume`);
    const topics = consumer.categories.map((c) => topicFor(this.prefix, c));
    const groupId = `${this.prefix}.${consumer.name}`;
    const log = this.log.child({ consumer: consumer.name, groupId });
    const abort = new AbortController();
    let current: KafkaConsumer | null = null;

    let failures = 0;
    const supervise = async () => {
      while (!abort.signal.aborted) {
        const kc = (current = this.kafka.consumer({
          groupId,
          sessionTimeout: 10_000,
          heartbeatInterval: 1_000,
          rebalanceTimeout: 10_000,
          maxWaitTimeInMs: 1_000,
          allowAutoTopicCreation: false,
          ...this.options.consumer,
        }));
        // kafkajs restarts itself after retriable crashes; after any other it stays down.
        const fatal = new Promise<Error>((resolve) =>
          kc.on(kc.events.CRASH, ({ payload }) => {
            if (!payload.restart) resolve(payload.error);
            else log.warn({ error: payload.error.message }, 'kafka consumer crashed; kafkajs restarts it');
          }),
        );
        kc.on(kc.events.GROUP_JOIN, () => (failures = 0));
        try {
          await this.ensureTopics(topics);
          await kc.connect();
          await kc.subscribe({ topics, fromBeginning: true });
          await kc.run({
            eachBatchAutoResolve: false,
            autoCommitInterval: 1_000,
            // Batches of different partitions overlap too: with one at a time, a fetch's batches wait for each other.
            partitionsConsumedConcurrently: consumer.concurrency && consumer.concurrency > 1 ? (this.options.partitions ?? DEFAULT_PARTITIONS) : 1,
            eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
              await handleKeyedBatch({
                messages: batch.messages.map((message) => ({ key: message.key?.toString() ?? '', offset: message.offset, message })),
                concurrency: consumer.concurrency ?? 1,
                resolve: resolveOffset,
                afterEach: async () => {
                  await heartbeat();
                  await commitOffsetsIfNecessary();
                },
                handle: async ({ message }) => {
                  if (!isRunning() || isStale() || abort.signal.aborted) return false;
                  let event: RecordedEvent;
                  try {
                    event = decodeEvent(message);
                  } catch (err) {
                    // Not an event: kept with its bytes (GET /admin/dead-letters), then committed past.
                    const letter = { consumer: consumer.name, topic: batch.topic, partition: batch.partition, offset: message.offset, key: message.key, value: message.value, error: (err as Error).message };
                    return (await deadLetterUndecodable(letter, this.policy, log, abort.signal, this.options.deadLetters)) !== 'aborted';
                  }
                  const outcome = await handleWithRetry(consumer, event, this.policy, log, abort.signal, this.options.deadLetters);
                  return outcome !== 'aborted';
                },
              });
            },
          });
          if (abort.signal.aborted) break;
          const stopped = new Promise<null>((resolve) => abort.signal.addEventListener('abort', () => resolve(null), { once: true }));
          const error = await Promise.race([fatal, stopped]);
          if (error) throw error;
        } catch (err) {
          if (abort.signal.aborted) break;
          const delay = backoffDelay(++failures, this.options.reconnectBaseMs ?? 250, this.options.reconnectMaxMs ?? 30_000);
          log.warn({ attempt: failures, retryInMs: delay, error: (err as Error).message }, 'kafka consumer failed; rebuilding it');
          await kc.disconnect().catch(() => undefined);
          await sleep(delay, abort.signal);
        }
      }
      // Leaves the group after the in-flight handler finished and its offsets were committed.
      await current?.disconnect().catch((err: Error) => log.warn({ error: err.message }, 'kafka consumer disconnect failed'));
    };
    const done = supervise();

    const running: RunningConsumer = {
      name: consumer.name,
      stop: async () => {
        this.running.delete(running);
        abort.abort();
        await done;
      },
    };
    this.running.add(running);
    return running;
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('kafka: no answer within 2000 ms')), 2_000);
    });
    const probe = this.withAdmin((admin) => admin.describeCluster());
    probe.catch(() => undefined);
    try {
      const cluster = await Promise.race([probe, timeout]);
      const detail = `${cluster.brokers.length} broker(s)${this.relayDetail()}${this.options.deadLetters?.detail?.() ?? ''}`;
      return { ok: true, detail };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.running].map((r) => r.stop()));
    await this.leader?.stop();
    await this.relay?.stop();
    const admin = this.admin;
    this.admin = null;
    await admin?.then((a) => a.disconnect()).catch(() => undefined);
  }

  /** `; relay leader (lease token 3) at 120`, `; relay standby`, or `; relay at 120` without a lease. */
  private relayDetail(): string {
    const relay = this.relayStatus();
    if (!relay) return '';
    const where = `at ${relay.position}${relay.connected ? '' : ' (not connected)'}`;
    if (!relay.lease) return `; relay ${where}`;
    if (relay.lease.state !== 'leader') return `; relay ${relay.lease.state}`;
    return `; relay leader (lease token ${relay.lease.token}) ${where}`;
  }

  private topicSettings() {
    return { partitions: this.options.partitions ?? DEFAULT_PARTITIONS, replicationFactor: this.options.replicationFactor };
  }

  private ensureTopics(topics: string[]): Promise<string[]> {
    return this.withAdmin((admin) => ensureTopics(admin, topics, this.topicSettings()));
  }

  /** One shared admin connection, rebuilt after a failure so the next call reconnects. */
  private async withAdmin<T>(fn: (admin: Admin) => Promise<T>): Promise<T> {
    if (!this.admin) {
      const admin = this.kafka.admin();
      this.admin = admin.connect().then(() => admin);
    }
    const pending = this.admin;
    try {
      return await fn(await pending);
    } catch (err) {
      if (this.admin === pending) this.admin = null;
      await pending.then((a) => a.disconnect()).catch(() => undefined);
      throw err;
    }
  }
}
