import type { EventMetadata, RecordedEvent } from '../domain/shared/events.js';

/** `any`: no check; `no_stream`: must not exist; `stream_exists`: must exist; a number: the last event's revision. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

export interface NewEvent {
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  schemaVersion?: number;
}

export interface AppendResult {
  /** Revision of the last appended event. */
  revision: number;
  /** Global position of the last appended event. */
  position: number;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive start revision (for backwards: the highest revision to return). */
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. Omit to start at the beginning. */
  after?: number;
  maxCount?: number;
  categories?: string[];
}

export interface SubscribeOptions {
  /** Exclusive checkpoint; omit to start at the beginning of the log. */
  after?: number;
  /** Only streams of these categories (`flow` matches `flow-…`). */
  categories?: string[];
}

/** Catch-up then live; iterate with `for await` (backpressure), `close()` ends the iteration. */
export interface EventSubscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

export type { RetentionPolicies, StreamRetention } from '../domain/shared/retention.js';

export interface EventLogStats {
  /** Position of the last event, or 0 when empty. */
  headPosition: number;
  /** Events stored (truncated operational streams no longer count), or null when the adapter cannot count them. */
  events: number | null;
  /** Bytes the log takes in its store, or null when the adapter cannot tell. */
  bytes: number | null;
}

export interface EventStore {
  readonly adapter: string;
  append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /** Empty array for a stream that does not exist. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  subscribe(options?: SubscribeOptions): EventSubscription;
  /** Position of the last event in the log, or 0 when empty. */
  headPosition(): Promise<number>;
  /** Size of the log (GET /system/overview): what the adapter can tell without reading every event. */
  stats(): Promise<EventLogStats>;
  health(): Promise<{ ok: boolean; detail?: string }>;
  close(): Promise<void>;
}

export class ConcurrencyError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'ConcurrencyError';
  }
}

/**
 * Events decided for a stream that is not in the log yet, held by the one writer that knows the
 * stream's name (a synchronous run executed in the process that requested it) so that they are
 * appended at once, with `no_stream`, when something must become durable or the work ends
 * (`flushPending` in commands/handle.ts). Nobody else can address the stream before that, so the
 * held state is the stream's whole truth.
 */
export interface PendingStream<S> {
  readonly streamId: string;
  /** The state after the held events (the decider's initial state while none is held). */
  state: S;
  /** The revision the stream will have once the held events are appended (-1: none held). */
  revision: number;
  events: NewEvent[];
  /** Set once the held events were appended: from then on the stream is written like any other. */
  flushed: boolean;
}
