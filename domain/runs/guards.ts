import { runError, runNodeNotFound, runNotFound } from './errors.js';
import { isFinished, nodeStateOf, type NodeRunState, type RunState } from './state.js';

export function requireRun(state: RunState): void {
  if (!state.exists) throw runNotFound();
}

/** The run exists and has not ended. */
export function requireActive(state: RunState): void {
  requireRun(state);
  if (isFinished(state.status)) throw runError('RUN_ALREADY_FINISHED', `run ${state.processId} is already ${state.status}`, { status: state.status });
}

/** The run is claimed, and by this worker when one is named (the fencing check). */
export function requireWorker(state: RunState, workerId: string | undefined): void {
  requireActive(state);
  if (state.status === 'queued') throw runError('RUN_NOT_CLAIMED', `run ${state.processId} has not been claimed by a worker yet`);
  if (workerId !== undefined && workerId !== state.workerId) {
    throw runError('RUN_CLAIMED_BY_OTHER_WORKER', `run ${state.processId} is held by worker ${state.workerId}`, { workerId: state.workerId });
  }
}

export function requireNode(state: RunState, nodeId: string): NodeRunState {
  const node = nodeStateOf(state, nodeId);
  if (!node) throw runNodeNotFound(nodeId);
  return node;
}

/** The node is running, and (when given) in the attempt the caller is reporting on. */
export function requireRunningNode(state: RunState, nodeId: string, attempt: number | undefined): NodeRunState {
  const node = requireNode(state, nodeId);
  if (node.status !== 'running') throw runError('NODE_NOT_RUNNING', `node ${nodeId} is ${node.status}, not running`, { nodeId, status: node.status });
  if (attempt !== undefined && attempt !== node.attempts) {
    throw runError('STALE_ATTEMPT', `node ${nodeId} is in attempt ${node.attempts}, not ${attempt}`, { nodeId, attempt: node.attempts });
  }
  return node;
}
