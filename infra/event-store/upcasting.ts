import type { RecordedEvent } from '../../domain/shared/events.js';
import { upcast, type Upcaster } from '../../domain/shared/upcasting.js';
import type { EventStore, EventSubscription, ReadAllOptions, ReadStreamOptions, SubscribeOptions } from '../../ports/event-store.js';

/** Wraps any adapter so that every reader (deciders, projectors, consumers) sees current event versions. */
export class UpcastingEventStore implements EventStore {
  constructor(
    readonly inner: EventStore,
    private readonly upcasters: Upcaster[],
  ) {}

  get adapter() {
    return this.inner.adapter;
  }

  private current = (event: RecordedEvent): RecordedEvent => {
    if (this.upcasters.length === 0) return event;
    const { version, data } = upcast(this.upcasters, event.type, event.schemaVersion, event.data);
    return version === event.schemaVersion ? event : { ...event, schemaVersion: version, data };
  };

  append: EventStore['append'] = (streamId, events, expected) => this.inner.append(streamId, events, expected);

  async readStream(streamId: string, options?: ReadStreamOptions) {
    const events = await this.inner.readStream(streamId, options);
    return this.upcasters.length === 0 ? events : events.map(this.current);
  }

  async readAll(options?: ReadAllOptions) {
    const events = await this.inner.readAll(options);
    return this.upcasters.length === 0 ? events : events.map(this.current);
  }

  subscribe(options?: SubscribeOptions): EventSubscription {
    const inner = this.inner.subscribe(options);
    // An async generator per subscription costs a few microtasks per event: skip it when idle.
    if (this.upcasters.length === 0) return inner;
    const current = this.current;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const event of inner) yield current(event);
      },
      close: () => inner.close(),
    };
  }

  headPosition = () => this.inner.headPosition();
  stats = () => this.inner.stats();
  health = () => this.inner.health();
  close = () => this.inner.close();
}
