import type { RecordedEvent } from '../../domain/shared/events.js';
import { backoffDelay } from '../../lib/backoff.js';
import { sleep } from '../../lib/sleep.js';
import type { Consumer } from '../../ports/bus.js';
import type { DeadLetter, DeadLetterSink, UndecodableDeadLetter } from '../../ports/dead-letters.js';
import type { Logger } from '../../ports/logger.js';
import { unavailableDependency } from '../availability/classify.js';

/**
 * Handler failure policy shared by every bus adapter.
 *
 * A handler that throws is retried with exponential backoff, up to `maxAttempts` calls in all.
 * After the last failure the event is dead-lettered: logged at error level with
 * `deadLetter: true` (consumer, event id, type, stream, position, error), recorded durably through
 * the bus's DeadLetterSink (a `deadletter-<id>` stream that operators list and retry through
 * /admin/dead-letters), and skipped, so one poisoned event cannot block its consumer (and every
 * stream behind it) forever. The event is skipped only once the record is stored: while the sink
 * fails (event store down), recording is retried with backoff and the consumer waits.
 *
 * A failure that says a server underneath did not answer (read store, key-value store, bus: see
 * infra/availability) is not the event's fault: it does not count as an attempt, and the handler
 * is retried with a capped backoff until the server is back (issue 37: a FerretDB restart
 * dead-lettered every message whose webhook delivery was being recorded).
 */
export interface RetryPolicy {
  /** Total handler calls for one event, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 5_000 };

export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...overrides };
  if (!(policy.maxAttempts >= 1)) throw new Error('retry policy: maxAttempts must be at least 1');
  return policy;
}

/** `aborted`: the bus is stopping; the event was not handled and must not be checkpointed. */
export type HandleOutcome = 'handled' | 'dead-lettered' | 'aborted';

/** The longest wait between two calls while a server underneath is down. */
const UNAVAILABLE_MAX_DELAY_MS = 10_000;

export async function handleWithRetry(
  consumer: Consumer,
  event: RecordedEvent,
  policy: RetryPolicy,
  logger: Logger,
  signal?: AbortSignal,
  deadLetters?: DeadLetterSink,
): Promise<HandleOutcome> {
  let firstFailedAt: Date | null = null;
  let waitsForServer = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      await consumer.handle(event);
      return 'handled';
    } catch (err) {
      const where = { consumer: consumer.name, eventId: event.id, type: event.type, streamId: event.streamId, position: event.position };
      const error = err instanceof Error ? err.message : String(err);
      const dependency = unavailableDependency(err);
      if (dependency) {
        attempt -= 1;
        const delay = backoffDelay(++waitsForServer, policy.baseDelayMs, Math.max(policy.maxDelayMs, UNAVAILABLE_MAX_DELAY_MS));
        logger.warn({ ...where, dependency, retryInMs: delay, error }, 'handler failed: a server it needs is unavailable; retrying until it is back');
        if (!(await sleep(delay, signal))) return 'aborted';
        continue;
      }
      waitsForServer = 0;
      firstFailedAt ??= new Date();
      if (attempt >= policy.maxAttempts) {
        logger.error({ ...where, attempts: attempt, error, deadLetter: true }, 'handler failed on every attempt; event dead-lettered and skipped');
        if (!deadLetters) return 'dead-lettered';
        const letter = { kind: 'event' as const, consumer: consumer.name, event, error, attempts: attempt, firstFailedAt, lastFailedAt: new Date() };
        return (await recordUntilStored(deadLetters, letter, policy, logger, signal)) ? 'dead-lettered' : 'aborted';
      }
      const delay = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      logger.warn({ ...where, attempt, retryInMs: delay, error }, 'handler failed; retrying');
      if (!(await sleep(delay, signal))) return 'aborted';
    }
  }
}

/**
 * A message the bus could not decode into an event (Kafka: not JSON, not an event envelope): no
 * handler can ever take it, so it is dead-lettered at once with its raw bytes and skipped, the same
 * way as an event that failed every attempt (recorded before the bus moves past it).
 */
export async function deadLetterUndecodable(
  letter: Omit<UndecodableDeadLetter, 'kind' | 'at'>,
  policy: RetryPolicy,
  logger: Logger,
  signal?: AbortSignal,
  deadLetters?: DeadLetterSink,
): Promise<HandleOutcome> {
  const where = { consumer: letter.consumer, topic: letter.topic, partition: letter.partition, offset: letter.offset, size: letter.value?.length ?? 0 };
  logger.error({ ...where, error: letter.error, deadLetter: true }, 'undecodable message dead-lettered and skipped');
  if (!deadLetters) return 'dead-lettered';
  return (await recordUntilStored(deadLetters, { kind: 'undecodable', ...letter, at: new Date() }, policy, logger, signal)) ? 'dead-lettered' : 'aborted';
}

/** False when the bus stopped first: the event is then neither recorded nor checkpointed, and comes back. */
async function recordUntilStored(sink: DeadLetterSink, letter: DeadLetter, policy: RetryPolicy, logger: Logger, signal?: AbortSignal): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sink.record(letter);
      return true;
    } catch (err) {
      const delay = backoffDelay(attempt, policy.baseDelayMs, policy.maxDelayMs * 6);
      const what = letter.kind === 'undecodable' ? { topic: letter.topic, partition: letter.partition, offset: letter.offset } : { eventId: letter.event.id };
      logger.error({ consumer: letter.consumer, ...what, attempt, retryInMs: delay, error: (err as Error).message }, 'dead letter could not be recorded; retrying');
      if (!(await sleep(delay, signal))) return false;
    }
  }
}
