import { Kafka, Partitioners, logLevel, type Admin, type KafkaConfig, type Message, type Producer } from 'kafkajs';
import type { IntegrationEvent } from '../../domain/integration/events.js';
import type { IntegrationPublisher } from '../../ports/integration.js';
import type { Logger } from '../../ports/logger.js';
import { ensureTopics, DEFAULT_PARTITIONS } from '../bus/kafka-topics.js';
import { kafkaLogCreator } from '../bus/kafka.js';
import { noDelaySocketFactory } from '../bus/kafka-socket.js';

/**
 * Public integration events on Kafka, CloudEvents 1.0 in binary content mode:
 *
 * - topic `<prefix>.public.<tenant>`, tenant `org.<orgId>` or `user.<userId>`: one topic per tenant,
 *   so an operator grants a tenant's principal READ on its own topic (prefixed ACLs) and nothing else;
 * - key: the CloudEvents subject (`runs/<processId>`, …), so one resource's events stay in order;
 * - value: UTF-8 JSON of the event's data;
 * - headers: `ce_specversion` (1.0), `ce_id`, `ce_type`, `ce_source` (`/flowsvc/<prefix>`),
 *   `ce_subject`, `ce_time`, `ce_dataschema` (`<PUBLIC_URL>/api/asyncapi.json#/components/schemas/<type>`), `ce_flowsvctenant` (extension attribute) and
 *   `content-type: application/json`.
 */
export const TENANT_HEADER = 'ce_flowsvctenant';

export function publicTopic(prefix: string, tenant: string): string {
  return `${prefix}.public.${tenant}`;
}

/** `publicUrl`: PUBLIC_URL, which makes ce_dataschema an absolute URI as CloudEvents wants; without it the path alone. */
export function encodeCloudEvent(event: IntegrationEvent, source: string, publicUrl = ''): Message {
  return {
    key: event.subject,
    value: JSON.stringify(event.data),
    headers: {
      ce_specversion: '1.0',
      ce_id: event.id,
      ce_type: event.type,
      ce_source: source,
      ce_subject: event.subject,
      ce_time: event.time,
      ce_dataschema: `${publicUrl.replace(/\/+$/, '')}${event.dataschema}`,
      [TENANT_HEADER]: event.tenant,
      'content-type': 'application/json',
    },
  };
}

export interface KafkaIntegrationOptions {
  brokers: string[];
  clientId: string;
  topicPrefix: string;
  partitions?: number;
  /** PUBLIC_URL: the base of ce_dataschema. */
  publicUrl?: string;
  logger: Logger;
  client?: Partial<KafkaConfig>;
}

export class KafkaIntegrationPublisher implements IntegrationPublisher {
  readonly adapter = 'kafka';
  private readonly kafka: Kafka;
  private readonly source: string;
  private connected: Promise<{ producer: Producer; admin: Admin }> | null = null;

  constructor(private readonly options: KafkaIntegrationOptions) {
    const log = options.logger.child({ component: 'integration-events' });
    this.source = `/flowsvc/${options.topicPrefix}`;
    this.kafka = new Kafka({
      clientId: `${options.clientId}-public`,
      brokers: options.brokers,
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator(log),
      connectionTimeout: 3_000,
      retry: { initialRetryTime: 200, maxRetryTime: 5_000, retries: 5 },
      socketFactory: noDelaySocketFactory,
      ...options.client,
    });
  }

  private connect() {
    if (!this.connected) {
      const attempt = (async () => {
        const admin = this.kafka.admin();
        // Idempotent with one request in flight: kafkajs' own retries neither duplicate nor reorder (field notes).
        const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
        await admin.connect();
        await producer.connect();
        return { producer, admin };
      })();
      this.connected = attempt;
      // A failed connection is tried again by the next publish (the bus retries the event).
      attempt.catch(() => {
        if (this.connected === attempt) this.connected = null;
      });
    }
    return this.connected;
  }

  async publish(events: IntegrationEvent[]): Promise<void> {
    if (events.length === 0) return;
    const { producer, admin } = await this.connect();
    const byTopic = new Map<string, Message[]>();
    for (const event of events) {
      const topic = publicTopic(this.options.topicPrefix, event.tenant);
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), encodeCloudEvent(event, this.source, this.options.publicUrl)]);
    }
    await ensureTopics(admin, [...byTopic.keys()], { partitions: this.options.partitions ?? DEFAULT_PARTITIONS });
    await producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
  }

  async close(): Promise<void> {
    const connected = this.connected;
    this.connected = null;
    if (!connected) return;
    const { producer, admin } = await connected.catch(() => ({ producer: null, admin: null }));
    await Promise.all([producer?.disconnect(), admin?.disconnect()].map((p) => p?.catch(() => undefined)));
  }
}
