/**
 * When to try reconnecting after the attempt-th failure in a row: exponential from `baseMs`,
 * capped at `maxMs`, with "equal jitter" (half fixed, half random) so servers that dropped together
 * do not all knock at once. `random` in [0, 1) comes in with the command: the decider stays pure.
 */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  /** A connection that lived this long before it was lost starts counting attempts afresh. */
  stableMs: number;
}

export function reconnectDelayMs(attempt: number, policy: BackoffPolicy, random: number): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.round(exp / 2 + (exp / 2) * Math.min(Math.max(random, 0), 1));
}
