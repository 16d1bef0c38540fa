import { withConsequences } from './advance.js';
import { asJson, checkedEvent, cut } from './checks.js';
import type { RunCommandOf } from './commands.js';
import { runError } from './errors.js';
import type { RunEvent } from './events.js';
import { requireNode, requireRunningNode, requireWorker } from './guards.js';
import { MAX_ERROR_MESSAGE_LENGTH, MAX_NODE_EVENT_BYTES, MAX_SKIP_REASON_LENGTH } from './limits.js';
import { nextSteps } from './scheduler.js';
import type { RunState } from './state.js';

/** Only a node the scheduler calls ready starts; nothing starts once a stop was asked for. */
export function startNode(c: RunCommandOf<'StartNode'>, state: RunState): RunEvent[] {
  requireWorker(state, c.workerId);
  if (state.stopRequested) throw runError('RUN_STOP_REQUESTED', `run ${state.processId} is stopping: no node starts any more`);
  const node = requireNode(state, c.nodeId);
  const steps = nextSteps(state.definition, state);
  if (!steps.ready.includes(c.nodeId)) {
    const why = node.status === 'pending' ? 'waits for its predecessors (or is to be skipped)' : `is ${node.status}`;
    throw runError('NODE_NOT_READY', `node ${c.nodeId} cannot start: it ${why}`, { nodeId: c.nodeId, status: node.status });
  }
  return [{ type: 'NodeStarted', data: { nodeId: c.nodeId, attempt: node.attempts + 1, at: c.at } }];
}

/**
 * Records a node's result, then what follows from it (skips, the run's end). An output too big
 * for one event is OUTPUT_TOO_LARGE (413): the caller records FailNode with that code instead.
 */
export function completeNode(c: RunCommandOf<'CompleteNode'>, state: RunState): RunEvent[] {
  requireWorker(state, c.workerId);
  const node = requireRunningNode(state, c.nodeId, c.attempt);
  const output = asJson(c.output, 'output');
  const metadata = asJson(c.metadata ?? {}, 'metadata');
  const completed = checkedEvent('NodeCompleted', {
    nodeId: c.nodeId,
    attempt: node.attempts,
    output: output.value as never,
    metadata: metadata.value as Record<string, never>,
    conditionalResults: c.conditionalResults ?? [],
    usage: c.usage ?? { total_tokens: 0, cost: 0 },
    executionTime: c.executionTime,
    at: c.at,
  });
  const bytes = output.bytes + metadata.bytes + asJson(completed.data.conditionalResults, 'conditionalResults').bytes;
  if (bytes > MAX_NODE_EVENT_BYTES) {
    throw runError('OUTPUT_TOO_LARGE', `node ${c.nodeId} produced ${bytes} bytes of output; at most ${MAX_NODE_EVENT_BYTES} fit in a run event`, {
      nodeId: c.nodeId,
      max: MAX_NODE_EVENT_BYTES,
      actual: bytes,
    });
  }
  return withConsequences(state, [completed], c.at);
}

/** Records a node's failure; without `data.continueOnError` the run fails in the same decision. */
export function failNode(c: RunCommandOf<'FailNode'>, state: RunState): RunEvent[] {
  requireWorker(state, c.workerId);
  const node = requireRunningNode(state, c.nodeId, c.attempt);
  const error = {
    code: c.error?.code,
    message: cut(String(c.error?.message ?? ''), MAX_ERROR_MESSAGE_LENGTH),
    ...(c.error?.provider !== undefined && { provider: c.error.provider }),
  };
  const failed = checkedEvent('NodeFailed', { nodeId: c.nodeId, attempt: node.attempts, error, executionTime: c.executionTime, at: c.at });
  return withConsequences(state, [failed], c.at);
}

/** Skips only what the scheduler would skip; nodes already skipped are ignored. */
export function skipNodes(c: RunCommandOf<'SkipNodes'>, state: RunState): RunEvent[] {
  requireWorker(state, c.workerId);
  const skippable = new Set(nextSteps(state.definition, state).skip.map((s) => s.nodeId));
  const events: RunEvent[] = [];
  const seen = new Set<string>();
  for (const { nodeId, reason } of c.skips) {
    const node = requireNode(state, nodeId);
    if (node.status === 'skipped' || seen.has(nodeId)) continue;
    if (!skippable.has(nodeId)) {
      throw runError('NODE_NOT_SKIPPABLE', `node ${nodeId} is ${node.status} and ${node.status === 'pending' ? 'may still run' : 'cannot be skipped'}`, {
        nodeId,
        status: node.status,
      });
    }
    seen.add(nodeId);
    events.push({ type: 'NodeSkipped', data: { nodeId, reason: cut(reason, MAX_SKIP_REASON_LENGTH), at: c.at } });
  }
  return events.length === 0 ? [] : withConsequences(state, events, c.at);
}
