import { LRUCache } from 'lru-cache';
import type { RecordedEvent } from '../domain/shared/events.js';
import { INTEGRATION_CATEGORIES, mayBePublic, originHop, originOf, originStreamOf, toIntegrationEvents, type StreamOrigin } from '../domain/integration/map.js';
import type { Consumer } from '../ports/bus.js';
import type { EventStore } from '../ports/event-store.js';
import type { IntegrationPublisher } from '../ports/integration.js';

export interface IntegrationPorts {
  eventStore: Pick<EventStore, 'readStream'>;
  publisher: IntegrationPublisher;
}

/**
 * Publishes the public integration events (issue 32): a consumer of its own, beside the run
 * worker, so a slow or absent broker delays subscribers and never a run. Each internal event of
 * the flow, run, workflow, collection, document and webhook-delivery streams is mapped (domain/integration) with its stream's origin,
 * read once from the stream's first event (a document's: its collection's) and cached; the bus records the position only after
 * the publisher resolved, so delivery is at least once, with the same CloudEvents ids.
 */
export function integrationPublisher(ports: IntegrationPorts): Consumer {
  const origins = new LRUCache<string, StreamOrigin>({ max: 10_000 });
  async function firstOf(stream: string): Promise<RecordedEvent | undefined> {
    return (await ports.eventStore.readStream(stream, { direction: 'forwards', maxCount: 1 }))[0];
  }
  async function originFor(event: RecordedEvent): Promise<StreamOrigin | null> {
    const stream = originStreamOf(event.streamId);
    const own = stream === event.streamId ? originOf(event) : null;
    if (own) {
      origins.set(stream, own);
      return own;
    }
    const cached = origins.get(stream);
    if (cached) return cached;
    const first = await firstOf(stream);
    // A webhook delivery's owner is its session's: one hop more.
    const hop = first ? originHop(first) : null;
    const owner = hop ? await firstOf(hop.stream) : first;
    const base = owner ? originOf(owner) : null;
    const found = base && hop ? { ...base, delivery: hop.delivery } : base;
    if (found) origins.set(stream, found);
    return found;
  }
  return {
    name: 'integration-events',
    categories: [...INTEGRATION_CATEGORIES],
    // Different streams at once; one stream's events stay in order (the bus's promise).
    concurrency: 8,
    async handle(event) {
      if (!mayBePublic(event)) return;
      await ports.publisher.publish(toIntegrationEvents(event, await originFor(event)));
    },
  };
}
