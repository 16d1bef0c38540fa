import { createHash } from 'node:crypto';
import { deadLetterDecider, deadLetterStreamId, UNDECODABLE_MAX_BYTES, type FailedEvent } from '../domain/operations/dead-letters.js';
import type { UndecodableDeadLetter } from '../ports/dead-letters.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, handleCommand, loadState, type CommandContext } from './handle.js';

/** One id per (consumer, event): the same failure always lands in the same stream. */
export function deadLetterIdOf(consumer: string, eventId: string): string {
  return createHash('sha256').update(`${consumer}\n${eventId}`).digest('hex').slice(0, 32);
}

/** One id per (consumer, message): a redelivered undecodable message lands in the same stream. */
export function undecodableLetterIdOf(consumer: string, where: { topic: string; partition: number; offset: string }): string {
  return deadLetterIdOf(consumer, `kafka:${where.topic}:${where.partition}:${where.offset}`);
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

/** The sink's letter without what the command takes from its context (`at`). */
export type UndecodableRecord = Omit<UndecodableDeadLetter, 'kind' | 'at'>;

/** The raw bytes go in base64, capped at UNDECODABLE_MAX_BYTES so one huge message cannot bloat the log. */
export function recordUndecodableMessage(store: EventStore, context: CommandContext, letter: UndecodableRecord) {
  const { consumer, topic, partition, offset } = letter;
  const deadLetterId = undecodableLetterIdOf(consumer, { topic, partition, offset });
  const value = letter.value ?? Buffer.alloc(0);
  const kept = value.subarray(0, UNDECODABLE_MAX_BYTES);
  return handleAtContextTime(store, context, deadLetterStreamId(deadLetterId), deadLetterDecider, {
    type: 'RecordUndecodableMessage',
    deadLetterId,
    consumer,
    message: {
      topic,
      partition,
      offset,
      key: letter.key ? letter.key.toString('utf8') : null,
      valueBase64: kept.toString('base64'),
      size: value.length,
      truncated: kept.length < value.length,
    },
    error: letter.error,
  });
}

export function requestDeadLetterRetry(store: EventStore, context: CommandContext, deadLetterId: string, requestId: string, consumerRunning: boolean) {
  return handleAtContextTime(store, context, deadLetterStreamId(deadLetterId), deadLetterDecider, { type: 'RequestRetry', deadLetterId, requestId, consumerRunning });
}

export function discardDeadLetter(store: EventStore, context: CommandContext, deadLetterId: string, reason: string | null) {
  return handleAtContextTime(store, context, deadLetterStreamId(deadLetterId), deadLetterDecider, { type: 'DiscardDeadLetter', deadLetterId, reason });
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
