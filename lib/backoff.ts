/**
 * Exponential backoff, capped, with jitter in [delay/2, delay] so restarted processes do not retry
 * in lockstep. `attempt` counts from 1; `random` is injectable for tests.
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const delay = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(delay / 2 + random() * (delay / 2));
}
