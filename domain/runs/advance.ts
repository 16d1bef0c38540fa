import { fold } from '../shared/decider.js';
import type { RunEvent } from './events.js';
import { boundRunOutputs, runOutputs } from './outputs.js';
import { nextSteps } from './scheduler.js';
import { evolveRun, isFinished, type RunState } from './state.js';

/**
 * What follows by itself from a step, decided with it so the log never shows a run that is over
 * but still "running": the skips the scheduler computes, then RunCompleted, RunFailed or
 * RunStopped once nothing is left to do. Returns `events` followed by those consequences.
 */
export function withConsequences(state: RunState, events: RunEvent[], at: string): RunEvent[] {
  const after = fold(evolveRun, state, events);
  if (!after.exists || after.status === 'queued' || isFinished(after.status)) return events;
  const steps = nextSteps(after.definition, after);
  const skipped: RunEvent[] = steps.skip.map((s) => ({ type: 'NodeSkipped', data: { nodeId: s.nodeId, reason: s.reason, at } }));
  if (!steps.done) return [...events, ...skipped];
  const final = fold(evolveRun, after, skipped);
  return [...events, ...skipped, terminalEvent(final, steps, at)];
}

function terminalEvent(state: RunState, steps: ReturnType<typeof nextSteps>, at: string): RunEvent {
  const usage = state.usage;
  if (steps.outcome === 'completed') {
    const { outputs, outputsTruncated } = boundRunOutputs(runOutputs(state.definition, state));
    return { type: 'RunCompleted', data: { outputs: outputs as Record<string, never>, outputsTruncated, usage, at } };
  }
  if (steps.outcome === 'stopped') return { type: 'RunStopped', data: { usage, at } };
  const failure = steps.failure ?? { code: 'RUN_FAILED', reason: 'the run failed', nodeId: null };
  return { type: 'RunFailed', data: { ...failure, usage, at } };
}
