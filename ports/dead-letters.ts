import type { RecordedEvent } from '../domain/shared/events.js';

/** A consumer's event that failed on every attempt of one delivery round. */
export interface EventDeadLetter {
  kind?: 'event';
  consumer: string;
  event: RecordedEvent;
  error: string;
  attempts: number;
  firstFailedAt: Date;
  lastFailedAt: Date;
}

/** A bus message that is no event (Kafka: not JSON, or not an event envelope): kept with its raw bytes. */
export interface UndecodableDeadLetter {
  kind: 'undecodable';
  consumer: string;
  /** Where it was read: the letter's identity (one letter per consumer and message). */
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  error: string;
  at: Date;
}

export type DeadLetter = EventDeadLetter | UndecodableDeadLetter;

/**
 * Where a bus puts dead letters (wired in app/container.ts to the `deadletter-<id>` streams).
 * The bus does not move past the event until `record` resolved, so a dead letter is never only a
 * log line.
 */
export interface DeadLetterSink {
  record(letter: DeadLetter): Promise<void>;
}
