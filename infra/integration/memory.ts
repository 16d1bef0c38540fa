import type { IntegrationEvent } from '../../domain/integration/events.js';
import type { IntegrationPublisher } from '../../ports/integration.js';

/**
 * The embedded configuration's publisher: public events need Kafka, so without `KAFKA_BROKERS`
 * the integration consumer does not run at all; this adapter exists for tests of the consumer
 * (it keeps what it was given, in order).
 */
export class MemoryIntegrationPublisher implements IntegrationPublisher {
  readonly adapter = 'memory';
  readonly published: IntegrationEvent[] = [];
  async publish(events: IntegrationEvent[]): Promise<void> {
    this.published.push(...events);
  }
  async close(): Promise<void> {}
}
