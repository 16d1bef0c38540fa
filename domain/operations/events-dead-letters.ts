import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/**
 * A consumer's event that failed on every attempt, kept as a stream `deadletter-<id>` (id derived
 * from consumer and event, so the same failure always lands in the same stream) instead of a log
 * line: operators list it through a projection and ask a worker to deliver it again.
 */
export const failedEventSchema = z.object({
  id: z.string(),
  type: z.string(),
  streamId: z.string(),
  revision: z.number().int(),
  position: z.number(),
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
  DeadLetterRetryRequested: z.object({ deadLetterId: z.string(), requestId: z.string(), requestedAt: z.string() }),
  DeadLetterResolved: z.object({ deadLetterId: z.string(), requestId: z.string(), by: z.string(), at: z.string() }),
  DeadLetterRetryFailed: z.object({ deadLetterId: z.string(), requestId: z.string(), by: z.string(), error: z.string(), at: z.string() }),
};

export type DeadLetterEvent = EventsOf<typeof deadLetterEventSchemas>;

export type FailedEvent = z.infer<typeof failedEventSchema>;

export const DEAD_LETTER_CATEGORY = 'deadletter';
export const deadLetterStreamId = (deadLetterId: string) => `${DEAD_LETTER_CATEGORY}-${deadLetterId}`;
