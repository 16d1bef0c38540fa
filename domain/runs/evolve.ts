import type { RunDefinition } from './definition.js';
import type { NodeError, RunEvent } from './events.js';
import { addUsage, initialRunState, nodeStateOf, pendingNode, type NodeRunState, type RunState } from './state.js';

/** Every event moves `version` on by one, so it is always the stream revision of the last folded event. */
export function evolveRun(state: RunState, event: RunEvent): RunState {
  const next = apply(state, event);
  return { ...next, version: state.version + 1 };
}

function withNode(state: RunState, nodeId: string, change: (n: NodeRunState) => NodeRunState, at: string): RunState {
  const current = nodeStateOf(state, nodeId) ?? pendingNode();
  return { ...state, nodes: { ...state.nodes, [nodeId]: change(current) }, updatedAt: at };
}

const ABORTED: NodeError = { code: 'ABORTED', message: 'the run ended while this node ran' };

/** When a run ends, nodes still marked running did not finish: they end as failed with code ABORTED. */
function abortRunning(nodes: Record<string, NodeRunState>, at: string): Record<string, NodeRunState> {
  if (!Object.values(nodes).some((n) => n.status === 'running')) return nodes;
  return Object.fromEntries(
    Object.entries(nodes).map(([id, n]) => [id, n.status === 'running' ? { ...n, status: 'failed', error: ABORTED, finishedAt: at } : n]),
  );
}

function apply(state: RunState, event: RunEvent): RunState {
  switch (event.type) {
    case 'RunRequested': {
      const d = event.data;
      const definition = d.definition as RunDefinition;
      return {
        ...initialRunState,
        exists: true,
        processId: d.processId,
        flowId: d.flowId,
        flowVersion: d.flowVersion,
        ownerId: d.ownerId,
        orgId: d.orgId,
        workspaceId: d.workspaceId,
        mode: d.mode,
        nodeId: d.nodeId,
        inputs: d.inputs,
        async: d.async,
        requestedBy: d.requestedBy,
        source: d.source,
        saveToHistory: d.saveToHistory,
        overrideConfig: d.overrideConfig,
        idempotencyKey: d.idempotencyKey,
        definition,
        nodes: Object.fromEntries(definition.nodes.map((n) => [n.id, pendingNode()])),
        requestedAt: d.at,
        updatedAt: d.at,
      };
    }
    case 'RunStarted':
      return { ...state, status: 'running', workerId: event.data.workerId, startedAt: event.data.at, updatedAt: event.data.at };
    case 'NodeStarted': {
      const { nodeId, attempt, at } = event.data;
      return withNode(state, nodeId, (n) => ({ ...n, status: 'running', attempts: attempt, startedAt: at, finishedAt: null, error: null }), at);
    }
    case 'NodeCompleted': {
      const { nodeId, output, metadata, conditionalResults, usage, executionTime, at } = event.data;
      const next = withNode(state, nodeId, (n) => ({ ...n, status: 'completed', output, metadata, conditionalResults, usage, executionTime, finishedAt: at }), at);
      return { ...next, usage: addUsage(state.usage, usage) };
    }
    case 'NodeFailed': {
      const { nodeId, error, executionTime, at } = event.data;
      return withNode(state, nodeId, (n) => ({ ...n, status: 'failed', error, executionTime, finishedAt: at }), at);
    }
    case 'NodeSkipped': {
      const { nodeId, reason, at } = event.data;
      return withNode(state, nodeId, (n) => ({ ...n, status: 'skipped', skipReason: reason, finishedAt: at }), at);
    }
    case 'RunCompleted': {
      const { outputs, outputsTruncated, at } = event.data;
      return { ...state, status: 'completed', outputs, outputsTruncated, finishedAt: at, updatedAt: at };
    }
    case 'RunFailed': {
      const { code, reason, nodeId, at } = event.data;
      return { ...state, status: 'failed', failure: { code, reason, nodeId }, nodes: abortRunning(state.nodes, at), finishedAt: at, updatedAt: at };
    }
    case 'RunStopRequested':
      return { ...state, stopRequested: { by: event.data.by, at: event.data.at }, updatedAt: event.data.at };
    case 'RunStopped':
      return { ...state, status: 'stopped', nodes: abortRunning(state.nodes, event.data.at), finishedAt: event.data.at, updatedAt: event.data.at };
    case 'RunResumed': {
      const { workerId, interruptedNodeIds, at } = event.data;
      const interrupted = new Set(interruptedNodeIds);
      const nodes = Object.fromEntries(
        Object.entries(state.nodes).map(([id, n]) => [id, interrupted.has(id) ? { ...n, status: 'pending' as const, startedAt: null } : n]),
      );
      return { ...state, workerId, resumes: state.resumes + 1, nodes, updatedAt: at };
    }
    default:
      return state;
  }
}
