import type { RecordedEvent } from '../domain/shared/events.js';

/** A consumer's event that failed on every attempt of one delivery round. */
export interface DeadLetter {
  consumer: string;
  event: RecordedEvent;
  error: string;
  attempts: number;
  firstFailedAt: Date;
  lastFailedAt: Date;
}

/**
 * Where a bus puts dead letters (wired in app/container.ts to the `deadletter-<id>` streams).
 * The bus does not move past the event until `record` resolved, so a dead letter is never only a
 * log line.
 */
export interface DeadLetterSink {
  record(letter: DeadLetter): Promise<void>;
}
