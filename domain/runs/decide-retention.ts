import { checkedEvent } from './checks.js';
import type { RunCommandOf } from './commands.js';
import { runError } from './errors.js';
import type { RunEvent } from './events.js';
import { requireRun } from './guards.js';
import { isFinished, type RunState } from './state.js';
import { summaryOf } from './summary.js';

/**
 * Retention's verdict on a run: a finished run not pruned yet is cut down to its summary; the
 * events before RunHistoryPruned are deleted by the store in the same append (domain/retention.ts).
 */
export function pruneRunHistory(c: RunCommandOf<'PruneRunHistory'>, state: RunState): RunEvent[] {
  requireRun(state);
  if (!isFinished(state.status)) throw runError('RUN_NOT_DONE', `run ${state.processId} is ${state.status}: only a finished run's history is pruned`, { status: state.status });
  if (state.historyPruned) return [];
  return [
    checkedEvent('RunHistoryPruned', {
      reason: c.reason,
      keepDays: c.keepDays,
      keepLast: c.keepLast,
      prunedEvents: state.version + 1,
      summary: summaryOf(state),
      at: c.at,
    }),
  ];
}
