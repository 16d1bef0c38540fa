import { nodeStateOf, type TemplateContext } from '../runs/index.js';
import { renderDeep } from './advance.js';
import { HISTORY_WARNING_EVENTS, waitingOn, type WorkflowState } from './state.js';

/** The public workflow object (GET /workflows/{id}, and each list item from the read model's folded state). */
export function workflowView(s: WorkflowState) {
  const historyLength = s.version + 1;
  const waiting = waitingOn(s);
  return {
    id: s.workflowId,
    execution: s.execution,
    flowId: s.flowId,
    flowVersion: s.flowVersion,
    status: s.status,
    input: s.input,
    ...(s.status === 'COMPLETED' && { result: s.result ?? null }),
    ...(s.error && { error: s.error }),
    state: s.state,
    pendingSignals: s.pendingSignals.map((p) => ({ signalId: p.signalId, name: p.name, payload: p.payload, receivedAt: p.at })),
    ...(waiting && { waitingOn: { kind: waiting.kind, name: waiting.name, nodeId: waiting.nodeId, since: waiting.since } }),
    timers: Object.values(s.timers).map(timerView),
    nodes: s.exec.definition.nodes.map((n) => {
      const ns = s.exec.nodes[n.id];
      return {
        nodeId: n.id,
        nodeType: typeof n.data.nodeType === 'string' ? n.data.nodeType : null,
        status: ns?.status ?? 'pending',
        attempts: ns?.attempts ?? 0,
        ...(ns?.status === 'completed' && { output: ns.output ?? null }),
        error: ns?.error ?? null,
        startedAt: ns?.startedAt ?? null,
        finishedAt: ns?.finishedAt ?? null,
      };
    }),
    searchAttributes: s.searchAttributes,
    memo: s.memo,
    cancelRequested: s.cancelRequested !== null,
    controls: s.controls,
    continuedFrom: s.continuedFrom,
    continuedAs: s.continuedAs,
    historyLength,
    ...(historyLength >= HISTORY_WARNING_EVENTS && {
      historyWarning: `the history has ${historyLength} events (warning at ${HISTORY_WARNING_EVENTS}); continue as new (POST /workflows/{id}/continue-as-new) to start a fresh history carrying the state`,
    }),
    workerId: s.workerId,
    createdAt: s.createdAt,
    startedAt: s.startedAt,
    closedAt: s.closedAt,
    updatedAt: s.updatedAt,
    version: s.version,
  };
}
export type WorkflowView = ReturnType<typeof workflowView>;

export const timerView = (t: WorkflowState['timers'][string]) => ({
  timerId: t.timerId,
  name: t.name,
  kind: t.kind,
  fireAt: t.fireAt,
  status: t.status,
  signal: t.signal,
  nodeId: t.nodeId,
  createdAt: t.createdAt,
  firedAt: t.firedAt,
  canceledAt: t.canceledAt,
});

/** A query's answer: `state`, `status`, `pendingSignals`, or one key of the state (undefined when there is no such key). */
export function answerQuery(s: WorkflowState, name: string): { found: boolean; result: unknown } {
  if (name === 'state') return { found: true, result: s.state };
  if (name === 'status') return { found: true, result: { status: s.status, waitingOn: waitingOn(s), result: s.result ?? null, error: s.error } };
  if (name === 'pendingSignals') return { found: true, result: s.pendingSignals.map((p) => ({ signalId: p.signalId, name: p.name, payload: p.payload, receivedAt: p.at })) };
  const declared = declaredQueries(s).find((n) => n.data.queryName === name);
  if (declared) return { found: true, result: renderDeep(declared.data.result ?? null, queryContext(s)) };
  if (Object.hasOwn(s.state, name)) return { found: true, result: s.state[name] };
  return { found: false, result: null };
}

/** The query nodes of the workflow's definition: user-defined queries, answered from the state without a worker. */
export const declaredQueries = (s: WorkflowState) => s.exec.definition.nodes.filter((n) => n.data.nodeType === 'query' && typeof n.data.queryName === 'string');

/** What a query's result template sees: the state, the workflow's inputs and every completed node's output. */
function queryContext(s: WorkflowState): TemplateContext {
  const nodes: Record<string, { output: unknown }> = {};
  for (const node of s.exec.definition.nodes) {
    const n = nodeStateOf(s.exec, node.id);
    if (n?.status === 'completed') nodes[node.id] = { output: n.output ?? null };
  }
  return { inputs: s.exec.inputs, previous: null, nodes, variables: {}, state: s.state };
}
