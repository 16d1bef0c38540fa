import { Partitioners, type Admin, type Kafka, type Message, type Producer } from 'kafkajs';
import { categoryOf, type RecordedEvent } from '../../domain/shared/events.js';
import { SNAPSHOT_CATEGORY } from '../../domain/shared/snapshots.js';
import type { EventStore, EventSubscription } from '../../ports/event-store.js';
import type { Logger } from '../../ports/logger.js';
import type { CheckpointStore } from '../../ports/read-store.js';
import { encodeEvent, ensureTopics, topicFor, DEFAULT_TOPIC_PREFIX, type TopicSettings } from './kafka-topics.js';
import { backoffDelay } from '../../lib/backoff.js';
import { sleep } from '../../lib/sleep.js';

export interface KafkaRelayOptions {
  kafka: Kafka;
  eventStore: EventStore;
  checkpoints: CheckpointStore;
  logger: Logger;
  topicPrefix?: string;
  topics?: TopicSettings;
  checkpointKey?: string;
  /** Upper bounds of one send; bytes stay well under the broker's default message.max.bytes (1 MiB). */
  maxBatchEvents?: number;
  maxBatchBytes?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** How long stop() lets an in-flight send finish before cutting the connection. */
  stopGraceMs?: number;
  /** Fence awaited before every batch (the relay lease, relay-leader.ts); absent: always publish. */
  mayPublish?: () => boolean | Promise<boolean>;
}

/** The relay lost its lease between two batches: it must not publish another one. */
export class RelayFencedError extends Error {
  constructor() {
    super('kafka relay: this process no longer holds the relay lease');
    this.name = 'RelayFencedError';
  }
}

export interface RelayStatus {
  running: boolean;
  connected: boolean;
  /** Position of the last event the broker acknowledged (the stored checkpoint follows it, written off the publishing path). */
  position: number;
  lastError: string | null;
  lastErrorAt: string | null;
  /** Consecutive failed attempts; 0 once a send succeeds again. */
  failures: number;
}

/** `topic` and `message` null: an event of a category no subscriber is meant to see, passed over (its position still counts). */
interface Outgoing {
  event: RecordedEvent;
  topic: string | null;
  message: Message | null;
}

/** Snapshots are a cache of our own folds (domain/shared/snapshots.ts), not events anyone downstream should read. */
const UNPUBLISHED_CATEGORIES: ReadonlySet<string> = new Set([SNAPSHOT_CATEGORY]);

const NOT_READY = Symbol('not-ready');
const nextMacrotask = () => new Promise<typeof NOT_READY>((resolve) => setImmediate(() => resolve(NOT_READY)));

/**
 * Publishes the event store's whole log to Kafka (but snapshots), in log order, after a durable checkpoint.
 *
 * The checkpoint is stored only after the broker acknowledged (acks=-1), so a crash or an
 * outage re-publishes from the last stored checkpoint (which trails the acknowledged position by
 * at most the writes in flight): nothing is skipped, some events may be
 * published twice (a retried send under a new producer id is not de-duplicated by the broker).
 * On any failure the producer is dropped and rebuilt after a capped, jittered backoff, forever:
 * an unreachable Kafka delays publication but never stops the process. One process at a time
 * runs it: the holder of the relay lease (relay-leader.ts), which fences every batch.
 */
export class KafkaRelay {
  private readonly log: Logger;
  private readonly key: string;
  private readonly prefix: string;
  private abort = new AbortController();
  private loopDone: Promise<void> | null = null;
  private producer: Producer | null = null;
  private admin: Admin | null = null;
  private subscription: EventSubscription | null = null;
  private state: RelayStatus = { running: false, connected: false, position: 0, lastError: null, lastErrorAt: null, failures: 0 };
  /** Checkpoint writes, off the publishing path: the last acknowledged position to store, what is stored, the write in flight. */
  private checkpointWanted = 0;
  private checkpointStored = 0;
  private checkpointWriting: Promise<void> | null = null;

  constructor(private readonly options: KafkaRelayOptions) {
    this.log = options.logger.child({ component: 'kafka-relay' });
    this.key = options.checkpointKey ?? 'relay:kafka';
    this.prefix = options.topicPrefix ?? DEFAULT_TOPIC_PREFIX;
  }

  /** Returns at once; connecting and publishing happen in the background. */
  start(): void {
    if (this.loopDone) return;
    this.abort = new AbortController();
    this.state.running = true;
    this.loopDone = this.loop().finally(() => {
      this.state.running = false;
      this.state.connected = false;
    });
  }

  status(): RelayStatus {
    return { ...this.state };
  }

  /**
   * Lets an in-flight send finish and its checkpoint be stored, then disconnects. A send stuck
   * in kafkajs' own retries (broker down) is cut after the grace period; it is re-sent on the
   * next start, since its checkpoint was never stored.
   */
  async stop(): Promise<void> {
    const done = this.loopDone;
    if (!done) return;
    this.abort.abort();
    await this.subscription?.close();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.stopGraceMs ?? 5_000)));
    await Promise.race([done, grace]);
    clearTimeout(timer);
    await this.disconnect();
    await done;
    await this.checkpointWriting;
    if (this.checkpointWanted > this.checkpointStored) {
      this.storeCheckpoint(this.checkpointWanted);
      await this.checkpointWriting;
    }
    this.loopDone = null;
  }

  private async loop(): Promise<void> {
    const signal = this.abort.signal;
    let initialised = false;
    while (!signal.aborted) {
      try {
        if (!initialised) {
          this.state.position = (await this.options.checkpoints.get(this.key)) ?? 0;
          this.checkpointWanted = this.checkpointStored = this.state.position;
          initialised = true;
        }
        await this.connect();
        this.state.connected = true;
        await this.pump(signal);
        if (!signal.aborted) throw new Error('event store subscription ended unexpectedly');
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof RelayFencedError) {
          // Not a failure: the leader stops this relay at once; until then, publish nothing.
          this.log.info({ position: this.state.position }, 'kafka relay: lease no longer held; batch not published');
          await this.disconnect();
          await sleep(this.options.retryMaxMs ?? 30_000, signal);
          continue;
        }
        const failures = ++this.state.failures;
        this.state.connected = false;
        this.state.lastError = err instanceof Error ? err.message : String(err);
        this.state.lastErrorAt = new Date().toISOString();
        const delay = backoffDelay(failures, this.options.retryBaseMs ?? 250, this.options.retryMaxMs ?? 30_000);
        this.log.warn({ attempt: failures, retryInMs: delay, position: this.state.position, error: this.state.lastError }, 'kafka relay: publishing failed; retrying');
        // A fresh producer (new producer id, fresh sequence numbers) is the reliable way back.
        await this.disconnect();
        await sleep(delay, signal);
      }
    }
    await this.disconnect();
  }

  private async connect(): Promise<void> {
    const { kafka } = this.options;
    this.admin = kafka.admin();
    // Idempotence is what keeps kafkajs' internal retries from duplicating or reordering a
    // batch; kafkajs only keeps order with it when a single request is in flight.
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await this.admin.connect();
    await this.producer.connect();
  }

  private async disconnect(): Promise<void> {
    const { producer, admin } = this;
    this.producer = null;
    this.admin = null;
    await Promise.all([producer?.disconnect(), admin?.disconnect()].map((p) => p?.catch(() => undefined)));
  }

  /** Reads the log from the checkpoint and publishes it; returns only when stopping. */
  private async pump(signal: AbortSignal): Promise<void> {
    const maxEvents = this.options.maxBatchEvents ?? 500;
    const maxBytes = this.options.maxBatchBytes ?? 512 * 1024;
    const subscription = this.options.eventStore.subscribe({ after: this.state.position });
    this.subscription = subscription;
    if (signal.aborted) await subscription.close();
    const iterator = subscription[Symbol.asyncIterator]();
    let pending: Promise<IteratorResult<RecordedEvent>> | null = null;
    try {
      for (let ended = false; !ended; ) {
        const first = await (pending ?? iterator.next());
        pending = null;
        if (first.done) return;
        const batch = [this.outgoing(first.value)];
        let bytes = size(batch[0]);
        // Take whatever the subscription already has buffered (it resolves within microtasks);
        // stop at the first event that is not ready yet instead of waiting for it.
        while (batch.length < maxEvents && bytes < maxBytes) {
          pending = iterator.next();
          const next = await Promise.race([pending, nextMacrotask()]);
          if (next === NOT_READY) break;
          pending = null;
          if (next.done) {
            ended = true;
            break;
          }
          batch.push(this.outgoing(next.value));
          bytes += size(batch[batch.length - 1]);
        }
        await this.publish(batch);
      }
    } finally {
      await subscription.close();
      if (this.subscription === subscription) this.subscription = null;
    }
  }

  private outgoing(event: RecordedEvent): Outgoing {
    const category = categoryOf(event.streamId);
    if (UNPUBLISHED_CATEGORIES.has(category)) return { event, topic: null, message: null };
    return { event, topic: topicFor(this.prefix, category), message: encodeEvent(event) };
  }

  private async publish(batch: Outgoing[]): Promise<void> {
    const { producer, admin } = this;
    if (!producer || !admin) throw new Error('kafka relay: not connected');
    if (this.options.mayPublish && !(await this.options.mayPublish())) throw new RelayFencedError();
    // Map keeps first-seen order; messages of one stream share a topic and a partition, so
    // their relative order inside the request is their log order.
    const byTopic = new Map<string, Message[]>();
    for (const { topic, message } of batch) {
      if (topic === null || message === null) continue;
      let messages = byTopic.get(topic);
      if (!messages) byTopic.set(topic, (messages = []));
      messages.push(message);
    }
    if (byTopic.size > 0) {
      await ensureTopics(admin, [...byTopic.keys()], this.options.topics);
      await producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    }
    const position = batch[batch.length - 1].event.position;
    this.state.position = position;
    this.state.failures = 0;
    this.storeCheckpoint(position);
  }

  /**
   * Stores the acknowledged position without holding the next batch back: at most one write in
   * flight, the newest position wins. The stored checkpoint never passes what the broker
   * acknowledged; it may trail it, so a crash re-publishes a little more (at least once, as
   * before). A failed write is retried with the next batch, or by stop().
   */
  private storeCheckpoint(position: number): void {
    this.checkpointWanted = Math.max(this.checkpointWanted, position);
    if (this.checkpointWriting) return;
    this.checkpointWriting = (async () => {
      try {
        while (this.checkpointWanted > this.checkpointStored) {
          const target = this.checkpointWanted;
          await this.options.checkpoints.set(this.key, target);
          this.checkpointStored = target;
        }
      } catch (err) {
        this.log.warn({ position: this.checkpointWanted, error: (err as Error).message }, 'kafka relay: storing the checkpoint failed; retrying with the next batch');
      } finally {
        this.checkpointWriting = null;
      }
    })();
  }
}

function size({ message }: Outgoing): number {
  return message ? String(message.value ?? '').length + 256 : 0;
}
