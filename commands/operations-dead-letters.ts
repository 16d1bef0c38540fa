import { createHash } from 'node:crypto';
import { deadLetterDecider, deadLetterStreamId, type FailedEvent } from '../domain/operations/dead-letters.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, handleCommand, loadState, type CommandContext } from './handle.js';

/** One id per (consumer, event): the same failure always lands in the same stream. */
export function deadLetterIdOf(consumer: string, eventId: string): string {
  return createHash('sha256').update(`${consumer}\n${eventId}`).digest('hex').slice(0, 32);
}

export interface DeadLetterRecord {
  consumer: string;
  event: FailedEvent;
  error: string;
  attempts: number;
  firstFailedAt: Date;
  lastFailedAt: Date;
}

export function recordDeadLetter(store: EventStore, context: CommandContext, letter: DeadLetterRecord) {
  const deadLetterId = deadLetterIdOf(letter.consumer, letter.event.id);
  return handleCommand(store, {
    streamId: deadLetterStreamId(deadLetterId),
    decider: deadLetterDecider,
    command: {
      type: 'RecordDeadLetter',
      deadLetterId,
      consumer: letter.consumer,
      event: letter.event,
      error: letter.error,
      attempts: letter.attempts,
      firstFailedAt: letter.firstFailedAt.toISOString(),
      lastFailedAt: letter.lastFailedAt.toISOString(),
    },
    context,
  });
}

export function requestDeadLetterRetry(store: EventStore, context: CommandContext, deadLetterId: string, requestId: string) {
  return handleAtContextTime(store, context, deadLetterStreamId(deadLetterId), deadLetterDecider, { type: 'RequestRetry', deadLetterId, requestId });
}

/** `error` absent: the handler succeeded this time. */
export function recordDeadLetterRetry(store: EventStore, context: CommandContext, deadLetterId: string, requestId: string, by: string, error?: string) {
  const at = context.now.toISOString();
  return handleCommand(store, {
    streamId: deadLetterStreamId(deadLetterId),
    decider: deadLetterDecider,
    command: error === undefined
      ? { type: 'RecordRetrySuccess', deadLetterId, requestId, by, at }
      : { type: 'RecordRetryFailure', deadLetterId, requestId, by, error, at },
    context,
  });
}

export function deadLetterState(store: EventStore, deadLetterId: string) {
  return loadState(store, deadLetterStreamId(deadLetterId), deadLetterDecider);
}
