import { continuesOnError, graphIndex, type GraphIndex, type RunDefinition } from './definition.js';
import { MAX_SKIP_REASON_LENGTH } from './limits.js';
import { isFinished, nodeStateOf, type NodeRunStatus, type RunState } from './state.js';

/**
 * DESIGN.md section 5 as a pure function: what may start now, what must be skipped, and whether
 * the run is over.
 *
 * - Start nodes (`data.startNode: true`, else nodes without incoming edges) are ready at once; a
 *   flagged start node does not wait for its incoming edges.
 * - An edge is *taken* when its source completed and, if one of the source's conditions names the
 *   edge's target, at least one condition naming that target was true (recorded in the source's
 *   conditionalResults); edges to targets no condition names are always taken. An edge is *dead*
 *   when its source was skipped, failed, or completed without selecting the target.
 * - A node is ready when none of its incoming edges is still open and at least one was taken
 *   (a join waits for every branch, and runs if any branch reached it); it is skipped when all of
 *   them are dead. Skips propagate through any number of levels in one call.
 * - A failed node fails the run at once (other running nodes are aborted), unless its
 *   `data.continueOnError` is true: then it counts as finished, its output downstream is
 *   `{error: {code, message}}`, its unconditional edges are taken and its conditional ones dead.
 * - Independent branches are ready together; the caller bounds concurrency (RUN_CONCURRENCY).
 * - After a stop request nothing more starts; the run is over once nothing runs.
 */
export interface SkipStep {
  nodeId: string;
  reason: string;
}
export interface NextSteps {
  ready: string[];
  skip: SkipStep[];
  running: string[];
  done: boolean;
  outcome?: 'completed' | 'failed' | 'stopped';
  failure?: { code: string; reason: string; nodeId: string | null };
}

type EdgeState = 'open' | 'taken' | 'dead';

const selects = (state: RunState, source: string, target: string) =>
  (nodeStateOf(state, source)?.conditionalResults ?? []).some((r) => r.targetNodeId === target && r.result === true);

function edgeState(index: GraphIndex, state: RunState, effective: Map<string, NodeRunStatus>, source: string, target: string): EdgeState {
  const status = effective.get(source);
  if (status === 'pending' || status === 'running') return 'open';
  const named = index.conditionTargets.get(source)?.has(target) ?? false;
  if (status === 'completed') return !named || selects(state, source, target) ? 'taken' : 'dead';
  if (status === 'failed' && continuesOnError(index.byId.get(source))) return named ? 'dead' : 'taken';
  return 'dead';
}

function deadEdgeReason(effective: Map<string, NodeRunStatus>, source: string): string {
  const status = effective.get(source);
  if (status === 'skipped') return `${source} was skipped`;
  if (status === 'failed') return `${source} failed`;
  return `the conditions of ${source} did not select it`;
}

const bound = (text: string) => (text.length <= MAX_SKIP_REASON_LENGTH ? text : `${text.slice(0, MAX_SKIP_REASON_LENGTH - 1)}…`);

function finishedSteps(state: RunState): NextSteps {
  const outcome = state.status === 'completed' ? 'completed' : state.status === 'stopped' ? 'stopped' : 'failed';
  return { ready: [], skip: [], running: [], done: true, outcome, ...(state.failure && { failure: state.failure }) };
}

export function nextSteps(definition: RunDefinition, state: RunState): NextSteps {
  if (isFinished(state.status)) return finishedSteps(state);
  const index = graphIndex(definition);
  const effective = new Map<string, NodeRunStatus>();
  const ready: string[] = [];
  const skip: SkipStep[] = [];
  const running: string[] = [];
  let failedNode: string | null = null;
  for (const id of index.order) {
    const status = nodeStateOf(state, id)?.status ?? 'pending';
    effective.set(id, status);
    if (status === 'running') running.push(id);
    if (status === 'failed' && !continuesOnError(index.byId.get(id))) failedNode ??= id;
    if (status !== 'pending') continue;
    if (index.starts.has(id)) {
      ready.push(id);
      continue;
    }
    const sources = index.incoming.get(id)!;
    const edges = sources.map((s) => edgeState(index, state, effective, s, id));
    if (edges.includes('open')) continue;
    if (edges.includes('taken')) {
      ready.push(id);
      continue;
    }
    const why = sources.length === 0 ? 'not reachable from a start node' : `no incoming connection was taken: ${[...new Set(sources)].map((s) => deadEdgeReason(effective, s)).join('; ')}`;
    skip.push({ nodeId: id, reason: bound(why) });
    effective.set(id, 'skipped');
  }
  // Nodes on a cycle never enter `order`; a stored flow has none, but a run must still end.
  for (const n of definition.nodes) if (!effective.has(n.id)) effective.set(n.id, nodeStateOf(state, n.id)?.status ?? 'pending');

  if (failedNode !== null) {
    const error = nodeStateOf(state, failedNode)?.error;
    const reason = `node ${failedNode} failed${error ? `: ${error.message || error.code}` : ''}`;
    return { ready: [], skip: [], running, done: true, outcome: 'failed', failure: { code: 'NODE_FAILED', reason, nodeId: failedNode } };
  }
  const allFinished = [...effective.values()].every((s) => s === 'completed' || s === 'failed' || s === 'skipped');
  if (allFinished) return { ready: [], skip, running, done: true, outcome: 'completed' };
  if (state.stopRequested) {
    return running.length > 0 ? { ready: [], skip: [], running, done: false } : { ready: [], skip: [], running, done: true, outcome: 'stopped' };
  }
  if (ready.length === 0 && running.length === 0) {
    const stuck = [...effective].filter(([, s]) => s === 'pending').map(([id]) => id);
    const reason = `nodes ${stuck.join(', ')} can never become ready (the flow has a cycle)`;
    return { ready: [], skip, running, done: true, outcome: 'failed', failure: { code: 'RUN_STUCK', reason, nodeId: null } };
  }
  return { ready, skip, running, done: false };
}
