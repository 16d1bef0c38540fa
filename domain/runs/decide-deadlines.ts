import { withConsequences } from './advance.js';
import { cut } from './checks.js';
import type { RunCommandOf } from './commands.js';
import type { RunEvent } from './events.js';
import { requireRun } from './guards.js';
import { MAX_ERROR_MESSAGE_LENGTH } from './limits.js';
import { isFinished, type RunState } from './state.js';

/**
 * Deadlines of a run, decided on its folded state with the time in the command (never a timer's
 * say-so): so any number of executors and sweeping workers may ask at once, and after a restart,
 * and the log still gets at most one terminal event. Both deadlines count from RunRequested.
 */

/** Milliseconds since the run was requested, as of `at`. */
const ageOf = (state: RunState, at: string) => Date.parse(at) - Date.parse(state.requestedAt);

function timedOut(state: RunState, timeoutMs: number, at: string): RunEvent {
  const phase = state.status === 'queued' ? 'still queued (no worker claimed it)' : 'still running';
  const reason = cut(`the run was ${phase} ${timeoutMs} ms after it was requested (RUN_TIMEOUT_MS)`, MAX_ERROR_MESSAGE_LENGTH);
  return { type: 'RunTimedOut', data: { timeoutMs, reason, usage: state.usage, at } };
}

/** A finished run, or one not yet due, is no event: the check may be repeated freely. */
export function timeOutRun(c: RunCommandOf<'TimeOutRun'>, state: RunState): RunEvent[] {
  requireRun(state);
  if (isFinished(state.status) || ageOf(state, c.at) < c.timeoutMs) return [];
  return [timedOut(state, c.timeoutMs, c.at)];
}

/**
 * A queued run nobody claimed: past the run's own deadline it times out (running it now would be
 * cut short anyway); past the claim deadline the sweeping worker claims it (RunStarted with
 * `unclaimedForMs`); otherwise, or once claimed or finished, no event.
 */
export function sweepUnclaimedRun(c: RunCommandOf<'SweepUnclaimedRun'>, state: RunState): RunEvent[] {
  requireRun(state);
  if (state.status !== 'queued') return [];
  const age = ageOf(state, c.at);
  if (age >= c.runTimeoutMs) return [timedOut(state, c.runTimeoutMs, c.at)];
  if (age < c.claimTimeoutMs) return [];
  return withConsequences(state, [{ type: 'RunStarted', data: { workerId: c.workerId, unclaimedForMs: Math.max(0, Math.round(age)), at: c.at } }], c.at);
}
