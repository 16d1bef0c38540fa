import { z } from 'zod';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/**
 * Environment variables of the messaging webhooks context (spread into configSchema; README's
 * configuration table mirrors it). Attempt n of a round (n ≥ 2) waits
 * min(MAX, BASE × FACTOR^(n-2)) × (1 ± JITTER) after attempt n-1; a Retry-After answer replaces
 * that delay (capped by WEBHOOK_RETRY_AFTER_MAX_MS).
 */
export const webhooksConfigShape = {
  /** Attempts per delivery (the first included) before it is recorded as failed. */
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(8),
  /** Delay before the second attempt. */
  WEBHOOK_RETRY_BASE_MS: positiveInt(10_000),
  /** Each further delay is the previous one times this factor. */
  WEBHOOK_RETRY_FACTOR: z.coerce.number().min(1).max(10).default(3),
  /** Longest delay between two attempts. */
  WEBHOOK_RETRY_MAX_MS: positiveInt(2 * 60 * 60 * 1000),
  /** Random spread of each delay: 0.2 means ±20 %. */
  WEBHOOK_RETRY_JITTER: z.coerce.number().min(0).max(1).default(0.2),
  /** Longest Retry-After honoured; a longer one is cut to this. */
  WEBHOOK_RETRY_AFTER_MAX_MS: positiveInt(60 * 60 * 1000),
  /** One attempt: connect, send, and the receiver's whole answer. */
  WEBHOOK_TIMEOUT_MS: positiveInt(10_000),
  /** Consecutive failed deliveries (each after all its attempts) that mark the webhook inactive. */
  WEBHOOK_FAILURE_THRESHOLD: positiveInt(5),
  /** Attempts in flight at once per worker process. */
  WEBHOOK_CONCURRENCY: positiveInt(32),
  /** How often a worker looks in the delivery log for pending deliveries nobody is attempting (after a crash). */
  WEBHOOK_SWEEP_INTERVAL_MS: positiveInt(10_000),
  /** A pending delivery this late is taken over by whichever worker's sweep sees it first. */
  WEBHOOK_RECOVERY_GRACE_MS: positiveInt(30_000),
} satisfies Record<string, z.ZodType>;
