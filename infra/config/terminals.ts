import { z } from 'zod';

/** Environment variables of the remote-terminals context (spread into configSchema; README's configuration table mirrors it). */
export const terminalsConfigShape = {
  /** The lease a heartbeat renews: a terminal is STALE after two leases without a heartbeat. */
  REMOTE_TERMINAL_LEASE_SECONDS: z.coerce.number().int().min(1).max(3_600).default(30),
  /** Seconds without a heartbeat after which a terminal is OFFLINE (must exceed two leases). */
  REMOTE_TERMINAL_OFFLINE_AFTER: z.coerce.number().int().min(2).max(30 * 24 * 3600).default(600),
  /** A prompt handed out by a poll and not acknowledged (first step or answer) within this is handed out again. */
  REMOTE_PROMPT_LEASE_SECONDS: z.coerce.number().int().min(1).max(3_600).default(60),
  /** Longest `wait` of `GET …/prompts/next` (seconds). */
  REMOTE_POLL_MAX_WAIT_SECONDS: z.coerce.number().int().min(0).max(300).default(60),
  /** Long polls and SSE streams waiting at once in one process; one more answers 503 TOO_MANY_WAITERS. */
  REMOTE_MAX_WAITERS: z.coerce.number().int().min(1).max(100_000).default(2_000),
  /** Seconds between SSE pings on a terminal's event stream. */
  REMOTE_SSE_PING_SECONDS: z.coerce.number().int().min(1).max(300).default(15),
  /** Live terminals (registered or reconnected, not disconnected, not offline) per user; one more answers 409 TOO_MANY_TERMINALS. */
  REMOTE_MAX_TERMINALS_PER_USER: z.coerce.number().int().min(1).max(10_000).default(20),
} satisfies Record<string, z.ZodType>;
