/**
 * The shapes of GET /processes/{id} and the run lists (projections/runs.ts runStateView): the
 * OpenAPI document types those answers loosely, so the pages name what they read here.
 */
export const FINAL_RUN_STATUSES = ['completed', 'failed', 'stopped', 'timed_out'] as const;
export const RUN_STATUSES = ['queued', 'running', ...FINAL_RUN_STATUSES] as const;

export interface NodeUsage {
  total_tokens?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
  cost?: number;
}

export interface NodeView {
  nodeId: string;
  nodeType: string | null;
  status: string;
  output?: unknown;
  usage: NodeUsage | null;
  executionTime: number | null;
  error: { code?: string; message?: string } | null;
  skipReason: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface ProcessView {
  processId: string;
  flowId: string;
  mode: 'flow' | 'node';
  nodeId: string | null;
  status: string;
  source: string;
  nodes: NodeView[];
  outputs: Record<string, unknown> | null;
  usage: NodeUsage | null;
  error: { code: string; reason: string; nodeId: string | null } | null;
  requestedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface ProcessPage {
  items: ProcessView[];
  nextCursor: string | null;
}

export const isFinalRun = (status: string) => (FINAL_RUN_STATUSES as readonly string[]).includes(status);
