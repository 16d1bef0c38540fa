import type { AttemptOutcome } from './events.js';

/** The retry schedule (from configuration, see infra/config/messaging-webhooks.ts). */
export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  factor: number;
  maxMs: number;
  /** 0.2: each delay is spread uniformly over ±20 %. */
  jitter: number;
  retryAfterMaxMs: number;
}

/** What one HTTP attempt gave: a status (with its Retry-After), or an error code when no answer came. */
export interface AttemptResult {
  statusCode: number | null;
  /** OUTBOUND_TIMEOUT, OUTBOUND_NETWORK_ERROR, OUTBOUND_ADDRESS_REFUSED, … when there is no status. */
  errorCode: string | null;
  retryAfterMs: number | null;
}

export interface AttemptVerdict {
  outcome: AttemptOutcome;
  /** What the delivery log shows for a non-success (`HTTP_503`, `OUTBOUND_TIMEOUT`). */
  error: string | null;
  /** Milliseconds until the next attempt, when outcome is `retry`. */
  delayMs: number | null;
  /** The endpoint said it is gone (410): the webhook is deactivated. */
  gone: boolean;
}

/** Errors that come from the URL or the policy, not from a passing condition: retrying cannot help. */
const PERMANENT_ERRORS = new Set(['OUTBOUND_INVALID_URL', 'OUTBOUND_ADDRESS_REFUSED', 'OUTBOUND_TOO_MANY_REDIRECTS']);

/**
 * Delay after the failed attempt number `attempt` of a round (1-based): base × factor^(attempt-1),
 * capped, then spread by the jitter. `random` is a number in [0, 1) (the caller's randomness).
 */
export function backoffDelayMs(policy: RetryPolicy, attempt: number, random: number): number {
  const plain = Math.min(policy.maxMs, policy.baseMs * policy.factor ** Math.max(0, attempt - 1));
  const spread = 1 + policy.jitter * (2 * random - 1);
  return Math.max(0, Math.round(Math.min(policy.maxMs, plain * spread)));
}

/**
 * Judges one attempt. Only 2xx succeeds. Retried: no answer (timeout, network or DNS error),
 * 408, 429 and 5xx; 429 and 503 honour Retry-After. 410 fails the delivery and deactivates the
 * webhook. Any other answer (3xx, 4xx) fails the delivery at once: the receiver refused this
 * request and would refuse it again.
 */
export function judgeAttempt(result: AttemptResult, attemptInRound: number, policy: RetryPolicy, random: number): AttemptVerdict {
  const { statusCode } = result;
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { outcome: 'succeeded', error: null, delayMs: null, gone: false };
  const error = statusCode !== null ? `HTTP_${statusCode}` : (result.errorCode ?? 'UNKNOWN_ERROR');
  if (statusCode === 410) return { outcome: 'failed', error, delayMs: null, gone: true };
  const retriable = statusCode === null ? !PERMANENT_ERRORS.has(error) : statusCode === 408 || statusCode === 429 || statusCode >= 500;
  if (!retriable || attemptInRound >= policy.maxAttempts) return { outcome: 'failed', error, delayMs: null, gone: false };
  const honoured = (statusCode === 429 || statusCode === 503) && result.retryAfterMs !== null;
  const delayMs = honoured ? Math.min(policy.retryAfterMaxMs, Math.max(0, result.retryAfterMs!)) : backoffDelayMs(policy, attemptInRound, random);
  return { outcome: 'retry', error, delayMs, gone: false };
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from `now`; null when absent or unreadable. */
export function parseRetryAfter(header: string | undefined, now: Date): number | null {
  if (!header) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now.getTime());
}
