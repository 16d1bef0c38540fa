import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/**
 * A consumer's event that failed on every attempt, kept as a stream `deadletter-<id>` (id derived
 * from consumer and event, so the same failure always lands in the same stream) instead of a log
 * line: operators list it through a projection and ask a worker to deliver it again.
 *
 * A bus message that is no event at all (Kafka: not JSON, or not an event envelope) is a letter
 * too (`UndecodableMessageDeadLettered`, kind `undecodable`): its raw bytes are kept so an operator
 * can see what arrived, but there is nothing to deliver again, so it can only be discarded.
 */
export const failedEventSchema = z.object({
  id: z.string(),
  type: z.string(),
  streamId: z.string(),
  revision: z.number().int(),
  position: z.number(),
});

/** Raw bytes kept of an undecodable message: at most this many (the original size is kept beside). */
export const UNDECODABLE_MAX_BYTES = 64 * 1024;

export const undecodableMessageSchema = z.object({
  topic: z.string(),
  partition: z.number().int().min(0),
  /** Kafka offsets are 64-bit: kept as the decimal string kafkajs gives. */
  offset: z.string().regex(/^\d{1,20}$/),
  /** The message key as UTF-8 text (NUL escaped, see storedText), null without one. */
  key: z.string().max(1024).nullable(),
  /** The value's first UNDECODABLE_MAX_BYTES bytes, base64; empty for a message without a value. */
  valueBase64: z.string(),
  /** The value's size in bytes as it arrived. */
  size: z.number().int().min(0),
  truncated: z.boolean(),
});

export const deadLetterEventSchemas = {
  EventDeadLettered: z.object({
    deadLetterId: z.string(),
    consumer: z.string(),
    event: failedEventSchema,
    error: z.string(),
    /** Handler calls in this round of delivery (CONSUMER_MAX_ATTEMPTS). */
    attempts: z.number().int().positive(),
    firstFailedAt: z.string(),
    lastFailedAt: z.string(),
  }),
  UndecodableMessageDeadLettered: z.object({
    deadLetterId: z.string(),
    consumer: z.string(),
    message: undecodableMessageSchema,
    error: z.string(),
    at: z.string(),
  }),
  DeadLetterRetryRequested: z.object({ deadLetterId: z.string(), requestId: z.string(), requestedAt: z.string() }),
  DeadLetterResolved: z.object({ deadLetterId: z.string(), requestId: z.string(), by: z.string(), at: z.string() }),
  DeadLetterRetryFailed: z.object({ deadLetterId: z.string(), requestId: z.string(), by: z.string(), error: z.string(), at: z.string() }),
  /** An operator closed the letter without delivering it (POST /admin/dead-letters/{id}/discard). */
  DeadLetterDiscarded: z.object({ deadLetterId: z.string(), reason: z.string().nullable(), at: z.string() }),
};

export type DeadLetterEvent = EventsOf<typeof deadLetterEventSchemas>;

export type FailedEvent = z.infer<typeof failedEventSchema>;
export type UndecodableMessage = z.infer<typeof undecodableMessageSchema>;
export type DeadLetterKind = 'event' | 'undecodable';

export const DEAD_LETTER_CATEGORY = 'deadletter';
export const deadLetterStreamId = (deadLetterId: string) => `${DEAD_LETTER_CATEGORY}-${deadLetterId}`;

/**
 * Every text a dead-letter event stores goes through this: error messages come from anywhere (a
 * handler, a library, a peer's answer) and may hold NUL, which FerretDB refuses in strings, so one
 * such letter stopped the dead-letters projection there (issue 37). NUL is kept visible, escaped.
 */
export function storedText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\\u0000') : text;
}
