import type { RunDefinition } from './definition.js';
import { FINISHED_STATUSES, type ConditionalResult, type NodeError, type NodeUsage, type OverrideConfig, type PruneReason, type RunEvent, type RunMode, type RunReplay, type UsageTotals } from './events.js';
import { stateFromSummary } from './summary.js';

export const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'stopped', 'timed_out'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const NODE_RUN_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped'] as const;
export type NodeRunStatus = (typeof NODE_RUN_STATUSES)[number];

export const isFinished = (status: RunStatus) => (FINISHED_STATUSES as readonly RunStatus[]).includes(status);
/** The statuses of a run not finished yet (queued, running), for the read models' "active" queries. */
export const ACTIVE_STATUSES: readonly RunStatus[] = RUN_STATUSES.filter((s) => !isFinished(s));

/** Which flow, at which version, and whose: what a run or a workflow is made from and scoped by. */
export interface FlowOrigin {
  flowId: string;
  flowVersion: number;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
}

export interface NodeRunState {
  status: NodeRunStatus;
  /** How many times the node was started (0 while never started). */
  attempts: number;
  startedAt: string | null;
  finishedAt: string | null;
  /** Set once completed. */
  output?: unknown;
  metadata: Record<string, unknown>;
  conditionalResults: ConditionalResult[];
  usage: NodeUsage | null;
  /** Milliseconds, set once completed or failed. */
  executionTime: number | null;
  error: NodeError | null;
  skipReason: string | null;
}

export interface RunState extends FlowOrigin {
  exists: boolean;
  processId: string;
  mode: RunMode;
  /** The node of a single-node run. */
  nodeId: string | null;
  inputs: Record<string, unknown>;
  async: boolean;
  requestedBy: string | null;
  source: string;
  saveToHistory: boolean;
  overrideConfig: OverrideConfig | null;
  idempotencyKey: string | null;
  definition: RunDefinition;
  status: RunStatus;
  /** The worker holding the run (the last claim or resume). */
  workerId: string | null;
  resumes: number;
  stopRequested: { by: string | null; at: string } | null;
  /** One entry per node of the definition, keyed by node id. */
  nodes: Record<string, NodeRunState>;
  usage: UsageTotals;
  /** Set by RunCompleted. */
  outputs: Record<string, unknown> | null;
  outputsTruncated: boolean;
  /** Why the run failed or timed out (code RUN_TIMED_OUT). */
  failure: { code: string; reason: string; nodeId: string | null } | null;
  requestedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
  /** Set once retention cut the run down to its summary (RunHistoryPruned): node outputs, inputs and the definition are gone. */
  historyPruned: { at: string; reason: PruneReason; prunedEvents: number } | null;
  /** Revision of the last folded event (-1: none). */
  version: number;
  /** Set on a replayed run: what it replays from. */
  replay: RunReplay | null;
}

/** The failure code a timed-out run shows (RunTimedOut has no code of its own: it is always this). */
export const RUN_TIMED_OUT = 'RUN_TIMED_OUT';

export const ZERO_USAGE: UsageTotals = Object.freeze({ total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 }) as UsageTotals;

export const initialRunState: RunState = {
  exists: false,
  processId: '',
  flowId: '',
  flowVersion: 0,
  ownerId: '',
  orgId: null,
  workspaceId: null,
  mode: 'flow',
  nodeId: null,
  inputs: {},
  async: false,
  requestedBy: null,
  source: 'api',
  saveToHistory: false,
  overrideConfig: null,
  idempotencyKey: null,
  definition: { nodes: [], edges: [] },
  replay: null,
  status: 'queued',
  workerId: null,
  resumes: 0,
  stopRequested: null,
  nodes: {},
  usage: ZERO_USAGE,
  outputs: null,
  outputsTruncated: false,
  failure: null,
  requestedAt: '',
  startedAt: null,
  finishedAt: null,
  updatedAt: '',
  historyPruned: null,
  version: -1,
};

export const pendingNode = (): NodeRunState => ({
  status: 'pending',
  attempts: 0,
  startedAt: null,
  finishedAt: null,
  metadata: {},
  conditionalResults: [],
  usage: null,
  executionTime: null,
  error: null,
  skipReason: null,
});

/** A node's state; node ids are user input, so never read through Object.prototype. */
export function nodeStateOf(state: Pick<RunState, 'nodes'>, nodeId: string): NodeRunState | undefined {
  return Object.hasOwn(state.nodes, nodeId) ? state.nodes[nodeId] : undefined;
}

export function addUsage(totals: UsageTotals, usage: NodeUsage): UsageTotals {
  return {
    total_tokens: totals.total_tokens + usage.total_tokens,
    prompt_tokens: totals.prompt_tokens + (usage.prompt_tokens ?? 0),
    completion_tokens: totals.completion_tokens + (usage.completion_tokens ?? 0),
    // Rounded to a nano-dollar so that summing many small float costs does not drift visibly.
    cost: Math.round((totals.cost + usage.cost) * 1e9) / 1e9,
  };
}

/** The flows context's history usage (camelCase) from a node's usage, for RecordNodeExecution. */
export const toHistoryUsage = (u: NodeUsage) => ({
  totalTokens: u.total_tokens,
  ...(u.prompt_tokens !== undefined && { promptTokens: u.prompt_tokens }),
  ...(u.completion_tokens !== undefined && { completionTokens: u.completion_tokens }),
  cost: u.cost,
});

// ---------------------------------------------------------------- evolve

/** Every event moves `version` on by one, so it is always the stream revision of the last folded event. */
export function evolveRun(state: RunState, event: RunEvent): RunState {
  // The first event of a pruned stream: its revision is the number of events pruned before it.
  if (event.type === 'RunHistoryPruned') return stateFromSummary(event.data, initialRunState);
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
        replay: d.replay ?? null,
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
    case 'RunTimedOut': {
      const { reason, at } = event.data;
      return { ...state, status: 'timed_out', failure: { code: RUN_TIMED_OUT, reason, nodeId: null }, nodes: abortRunning(state.nodes, at), finishedAt: at, updatedAt: at };
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
