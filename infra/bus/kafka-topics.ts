import type { Admin, IHeaders, KafkaMessage, Message } from 'kafkajs';
import type { RecordedEvent } from '../../domain/shared/events.js';

/**
 * Kafka topic layout, the contract with every downstream subscriber (documented in the README):
 *
 * - one topic per event category: `<prefix>.events.<category>` (prefix `flowsvc` by default),
 *   e.g. `flowsvc.events.flow` carries every event of every `flow-…` stream;
 * - message key: the stream id, so one stream always lands on one partition and keeps its order;
 * - message value: UTF-8 JSON of the whole RecordedEvent
 *   `{id, type, streamId, revision, position, schemaVersion, data, metadata}`;
 * - headers (UTF-8 strings): `event-id`, `event-type`, `stream-id`, `revision`, `position`,
 *   `schema-version`, so routers can filter without parsing the value; `traceparent` (W3C trace
 *   context of the span that wrote the event) when tracing was on, so a subscriber can continue the trace.
 *
 * Delivery is at least once: the relay can publish an event twice after a failure (a retried
 * batch under a new producer id), so subscribers de-duplicate by `event-id` or by
 * `stream-id` + `revision`.
 */
export const DEFAULT_TOPIC_PREFIX = 'flowsvc';
export const DEFAULT_PARTITIONS = 3;
export const DEFAULT_REPLICATION_FACTOR = 1;

export const HEADER = {
  eventId: 'event-id',
  eventType: 'event-type',
  streamId: 'stream-id',
  revision: 'revision',
  position: 'position',
  schemaVersion: 'schema-version',
  traceparent: 'traceparent',
} as const;

// Kafka's own rule for topic names; a category that breaks it would be unpublishable.
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;

export function topicFor(prefix: string, category: string): string {
  const topic = `${prefix}.events.${category}`;
  if (!LEGAL_TOPIC.test(topic)) throw new Error(`category "${category}" does not make a legal Kafka topic name: ${topic}`);
  return topic;
}

export function encodeEvent(event: RecordedEvent): Message {
  return {
    key: event.streamId,
    value: JSON.stringify(event),
    headers: {
      [HEADER.eventId]: event.id,
      [HEADER.eventType]: event.type,
      [HEADER.streamId]: event.streamId,
      [HEADER.revision]: String(event.revision),
      [HEADER.position]: String(event.position),
      [HEADER.schemaVersion]: String(event.schemaVersion),
      ...(event.metadata?.traceparent ? { [HEADER.traceparent]: event.metadata.traceparent } : {}),
    },
  };
}

export function decodeEvent(message: Pick<KafkaMessage, 'value'>): RecordedEvent {
  if (!message.value) throw new Error('kafka message without a value');
  const event = JSON.parse(message.value.toString('utf8')) as RecordedEvent;
  if (typeof event?.id !== 'string' || typeof event.streamId !== 'string' || typeof event.position !== 'number') {
    throw new Error('kafka message value is not a RecordedEvent');
  }
  return event;
}

export function headerString(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

export interface TopicSettings {
  partitions?: number;
  replicationFactor?: number;
}

// Per admin client: what this process already knows to exist, so the hot path asks no broker.
const known = new WeakMap<Admin, Set<string>>();

/**
 * Creates the topics that do not exist yet; safe to call concurrently from several processes
 * (a topic created by someone else in between counts as existing). Partition count is only
 * applied at creation; existing topics are left as they are.
 */
export async function ensureTopics(admin: Admin, topics: string[], settings: TopicSettings = {}): Promise<string[]> {
  let cache = known.get(admin);
  if (!cache) known.set(admin, (cache = new Set()));
  const wanted = [...new Set(topics)].filter((t) => !cache.has(t));
  if (wanted.length === 0) return [];
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter((t) => !existing.has(t));
  if (missing.length > 0) {
    // Resolves false when every missing topic was created concurrently (TOPIC_ALREADY_EXISTS).
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((topic) => ({
        topic,
        numPartitions: settings.partitions ?? DEFAULT_PARTITIONS,
        replicationFactor: settings.replicationFactor ?? DEFAULT_REPLICATION_FACTOR,
      })),
    });
  }
  for (const t of wanted) cache.add(t);
  return missing;
}
