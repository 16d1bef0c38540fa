import type { RecordedEvent } from '../domain/shared/events.js';
import { withTraceparent } from '../lib/tracing.js';
import type { Consumer } from '../ports/bus.js';

/**
 * The consumer with each event handled inside the trace of the span that wrote it (the event's
 * `metadata.traceparent`): a run requested through the API and executed by a worker in another
 * process, a webhook delivered for a message, are one trace. The same on the embedded bus and on
 * Kafka, since the context travels in the event itself. No span of its own: a consumer that does
 * work worth showing opens one (a run, a node, a delivery).
 */
export function traced(consumer: Consumer): Consumer {
  const handle = (event: RecordedEvent) => withTraceparent(event.metadata?.traceparent, () => consumer.handle(event));
  return new Proxy(consumer, { get: (target, key, receiver) => (key === 'handle' ? handle : Reflect.get(target, key, receiver)) });
}
