import type { RecordedEvent } from '../domain/shared/events.js';

/**
 * A consumer reacts to events. The bus delivers every event of its categories at least once,
 * in per-stream order, and resumes after a crash from the last event the handler finished.
 * Handlers must therefore be idempotent.
 */
export interface Consumer {
  /** Stable name: the checkpoint key (embedded) or the consumer group id (Kafka). */
  name: string;
  categories: string[];
  /**
   * Most events of different streams handled at once (default 1). Per-stream order holds at any
   * value. The Kafka bus honours it within each partition's batch; the embedded bus hands events
   * over one at a time (its log is read in one place, in order).
   */
  concurrency?: number;
  handle(event: RecordedEvent): Promise<void>;
}

export interface RunningConsumer {
  readonly name: string;
  /** Waits for the in-flight handler, stores the position, and stops. */
  stop(): Promise<void>;
}

export interface Bus {
  readonly adapter: string;
  start(consumer: Consumer): Promise<RunningConsumer>;
  health(): Promise<{ ok: boolean; detail?: string }>;
  /** Starts publishing the log to the bus, where the bus needs a relay (Kafka); the embedded bus reads the log itself. */
  startRelay?(): void;
  /** Stops every consumer (and the relay, for Kafka). */
  close(): Promise<void>;
}
