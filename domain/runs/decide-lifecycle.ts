import { validationFailed } from '../flows/guards.js';
import { withConsequences } from './advance.js';
import { asJson, checkedEvent, cut, tooLarge } from './checks.js';
import type { RunCommandOf } from './commands.js';
import { toRunDefinition } from './definition.js';
import { runError, runNodeNotFound } from './errors.js';
import type { RunEvent } from './events.js';
import { requireActive, requireNode, requireRun, requireWorker } from './guards.js';
import { MAX_ERROR_MESSAGE_LENGTH, MAX_NODE_ATTEMPTS, MAX_RUN_REQUEST_BYTES } from './limits.js';
import type { RunState } from './state.js';

export function requestRun(c: RunCommandOf<'RequestRun'>, state: RunState): RunEvent[] {
  if (state.exists) throw runError('RUN_ALREADY_EXISTS', `run ${c.processId} already exists`, { processId: c.processId });
  const nodeId = c.mode === 'node' ? (c.nodeId ?? null) : null;
  if (c.mode === 'node' && !nodeId) throw validationFailed([{ field: 'nodeId', message: 'required for a single-node run' }]);
  if (nodeId !== null && !c.nodes.some((n) => n.id === nodeId)) throw runNodeNotFound(nodeId);
  if (c.mode === 'flow' && c.nodes.length === 0) throw runError('FLOW_HAS_NO_NODES', `flow ${c.flowId} has no nodes to run`);
  const requested = checkedEvent('RunRequested', {
    processId: c.processId,
    flowId: c.flowId,
    flowVersion: c.flowVersion,
    ownerId: c.ownerId,
    orgId: c.orgId,
    workspaceId: c.workspaceId,
    mode: c.mode,
    nodeId,
    inputs: asJson(c.inputs, 'inputs').value as Record<string, never>,
    async: c.async,
    requestedBy: c.requestedBy,
    source: c.source ?? 'api',
    saveToHistory: c.saveToHistory ?? false,
    overrideConfig: c.overrideConfig ?? null,
    idempotencyKey: c.idempotencyKey ?? null,
    definition: toRunDefinition(c.nodes, c.edges, nodeId ?? undefined) as never,
    ...(c.replay && { replay: c.replay }),
    at: c.at,
  });
  // The snapshot is what makes a run independent of later edits; it must fit in one event.
  const bytes = asJson(requested.data, 'body').bytes;
  if (bytes > MAX_RUN_REQUEST_BYTES) throw tooLarge('runRequestBytes', MAX_RUN_REQUEST_BYTES, bytes);
  if (c.claimBy === undefined) return [requested];
  return withConsequences(state, [requested, { type: 'RunStarted', data: { workerId: c.claimBy, at: c.at } }], c.at);
}

/** Claiming twice by the same worker is no event; a run held by another worker is refused (resume it instead). */
export function claimRun(c: RunCommandOf<'ClaimRun'>, state: RunState): RunEvent[] {
  requireActive(state);
  if (state.status === 'running') {
    if (state.workerId === c.workerId) return [];
    throw runError('RUN_CLAIMED_BY_OTHER_WORKER', `run ${state.processId} is held by worker ${state.workerId}`, { workerId: state.workerId });
  }
  return withConsequences(state, [{ type: 'RunStarted', data: { workerId: c.workerId, at: c.at } }], c.at);
}

/**
 * A repair path: the decider completes a run by itself once its last node ends. Completing a
 * completed run is no event; a run with work left is RUN_NOT_DONE.
 */
export function completeRun(c: RunCommandOf<'CompleteRun'>, state: RunState): RunEvent[] {
  requireRun(state);
  if (state.status === 'completed') return [];
  requireWorker(state, c.workerId);
  const events = withConsequences(state, [], c.at);
  if (events.some((e) => e.type === 'RunCompleted')) return events;
  throw runError('RUN_NOT_DONE', `run ${state.processId} cannot complete: nodes are still to run or one failed`);
}

/** For what the graph does not say: a timeout, a definition that cannot load, a lost worker. Failing a failed run is no event. */
export function failRun(c: RunCommandOf<'FailRun'>, state: RunState): RunEvent[] {
  requireRun(state);
  if (state.status === 'failed') return [];
  requireActive(state);
  if (state.status === 'running' && c.workerId !== undefined) requireWorker(state, c.workerId);
  if (c.nodeId != null) requireNode(state, c.nodeId);
  return [
    checkedEvent('RunFailed', {
      code: c.code ?? 'RUN_FAILED',
      reason: cut(c.reason, MAX_ERROR_MESSAGE_LENGTH),
      nodeId: c.nodeId ?? null,
      usage: state.usage,
      at: c.at,
    }),
  ];
}

/**
 * A queued run stops at once (no worker holds it); a claimed one stops once nothing runs: at once
 * when no node is in flight, else when its worker confirms (after aborting in-flight calls) or
 * the last running node ends. Asking twice is no event.
 */
export function requestStop(c: RunCommandOf<'RequestStop'>, state: RunState): RunEvent[] {
  requireActive(state);
  if (state.stopRequested) return [];
  const requested: RunEvent = { type: 'RunStopRequested', data: { by: c.by, at: c.at } };
  if (state.status === 'queued') return [requested, { type: 'RunStopped', data: { usage: state.usage, at: c.at } }];
  return withConsequences(state, [requested], c.at);
}

export function confirmStop(c: RunCommandOf<'ConfirmStop'>, state: RunState): RunEvent[] {
  requireRun(state);
  if (state.status === 'stopped') return [];
  requireActive(state);
  if (!state.stopRequested) throw runError('STOP_NOT_REQUESTED', `nobody asked run ${state.processId} to stop`);
  if (c.workerId !== undefined) requireWorker(state, c.workerId);
  return [{ type: 'RunStopped', data: { usage: state.usage, at: c.at } }];
}

/**
 * Taking over a run whose worker the caller judged dead. Completed nodes stay completed; nodes that
 * were running start again with the next attempt, unless one already had `maxAttempts`: then the
 * run fails with NODE_INTERRUPTED_TOO_OFTEN. A run asked to stop just stops.
 */
export function resumeRun(c: RunCommandOf<'ResumeRun'>, state: RunState): RunEvent[] {
  requireActive(state);
  if (state.status === 'queued') throw runError('RUN_NOT_CLAIMED', `run ${state.processId} was never claimed: claim it instead`);
  if (state.stopRequested) return [{ type: 'RunStopped', data: { usage: state.usage, at: c.at } }];
  const interrupted = Object.entries(state.nodes).filter(([, n]) => n.status === 'running');
  const maxAttempts = c.maxAttempts ?? MAX_NODE_ATTEMPTS;
  const exhausted = interrupted.find(([, n]) => n.attempts >= maxAttempts);
  if (exhausted) {
    const [nodeId, n] = exhausted;
    const reason = `node ${nodeId} was interrupted ${n.attempts} times (its worker stopped while it ran); not retried again`;
    return [{ type: 'RunFailed', data: { code: 'NODE_INTERRUPTED_TOO_OFTEN', reason, nodeId, usage: state.usage, at: c.at } }];
  }
  const resumed: RunEvent = {
    type: 'RunResumed',
    data: { workerId: c.workerId, previousWorkerId: state.workerId, interruptedNodeIds: interrupted.map(([id]) => id), at: c.at },
  };
  return withConsequences(state, [resumed], c.at);
}
