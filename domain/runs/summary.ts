import type { RunEventData, RunSummary } from './events.js';
import type { NodeRunState, RunState } from './state.js';

/** The fields a run and its summary share as they are: which run of which flow, whose, how it was asked for. */
function originOf(s: RunState | RunSummary) {
  const { processId, flowId, flowVersion, ownerId, orgId, workspaceId, mode, nodeId, async, requestedBy, source, saveToHistory, idempotencyKey } = s;
  return { processId, flowId, flowVersion, ownerId, orgId, workspaceId, mode, nodeId, async, requestedBy, source, saveToHistory, idempotencyKey };
}

/**
 * A finished run reduced to what retention keeps (runSummarySchema): nodes in definition order
 * with their type, status, timings, usage and error; no inputs, outputs or node outputs.
 */
export function summaryOf(s: RunState): RunSummary {
  return {
    ...originOf(s),
    status: s.status as RunSummary['status'],
    workerId: s.workerId,
    resumes: s.resumes,
    stopRequested: s.stopRequested,
    usage: s.usage,
    outputsTruncated: s.outputsTruncated,
    failure: s.failure,
    requestedAt: s.requestedAt,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt ?? s.updatedAt,
    nodes: s.definition.nodes.map((n) => {
      const ns = Object.hasOwn(s.nodes, n.id) ? s.nodes[n.id] : undefined;
      return {
        nodeId: n.id,
        nodeType: typeof n.data.nodeType === 'string' ? n.data.nodeType : null,
        status: ns?.status ?? 'pending',
        attempts: ns?.attempts ?? 0,
        startedAt: ns?.startedAt ?? null,
        finishedAt: ns?.finishedAt ?? null,
        usage: ns?.usage ?? null,
        executionTime: ns?.executionTime ?? null,
        error: ns?.error ?? null,
        skipReason: ns?.skipReason ?? null,
      };
    }),
  };
}

/** The state a pruned run folds to: its summary, with a definition that names the nodes and their types only. */
export function stateFromSummary(d: RunEventData<'RunHistoryPruned'>, initial: RunState): RunState {
  const s = d.summary;
  const nodes: Record<string, NodeRunState> = {};
  for (const n of s.nodes) {
    nodes[n.nodeId] = {
      status: n.status,
      attempts: n.attempts,
      startedAt: n.startedAt,
      finishedAt: n.finishedAt,
      metadata: {},
      conditionalResults: [],
      usage: n.usage,
      executionTime: n.executionTime,
      error: n.error,
      skipReason: n.skipReason,
    };
  }
  return {
    ...initial,
    exists: true,
    ...originOf(s),
    definition: { nodes: s.nodes.map((n) => ({ id: n.nodeId, data: n.nodeType === null ? {} : { nodeType: n.nodeType } })) as RunState['definition']['nodes'], edges: [] },
    status: s.status,
    workerId: s.workerId,
    resumes: s.resumes,
    stopRequested: s.stopRequested,
    nodes,
    usage: s.usage,
    outputs: null,
    outputsTruncated: s.outputsTruncated,
    failure: s.failure,
    requestedAt: s.requestedAt,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
    updatedAt: s.finishedAt,
    historyPruned: { at: d.at, reason: d.reason, prunedEvents: d.prunedEvents },
    version: d.prunedEvents,
  };
}
