import type { RunDefinition } from './definition.js';
import type { ConditionalResult, NodeError, NodeUsage, OverrideConfig, RunMode, UsageTotals } from './events.js';

export const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'stopped'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const NODE_RUN_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped'] as const;
export type NodeRunStatus = (typeof NODE_RUN_STATUSES)[number];

export const FINISHED_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'stopped'];
export const isFinished = (status: RunStatus) => FINISHED_STATUSES.includes(status);

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

export interface RunState {
  exists: boolean;
  processId: string;
  flowId: string;
  flowVersion: number;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
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
  failure: { code: string; reason: string; nodeId: string | null } | null;
  requestedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
  /** Revision of the last folded event (-1: none). */
  version: number;
}

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
