import type { IntegrationEvent } from '../domain/integration/events.js';

/**
 * Where public integration events go (issue 32): CloudEvents 1.0 on per-tenant topics. An
 * adapter publishes a batch in order and resolves only once every event is durably accepted, so
 * the consumer that calls it can record its position after it (at least once).
 */
export interface IntegrationPublisher {
  readonly adapter: string;
  publish(events: IntegrationEvent[]): Promise<void>;
  close(): Promise<void>;
}
