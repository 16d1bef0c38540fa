import type { ConversationScope } from '../domain/assistant/index.js';

/**
 * What the assistant's tools read (implemented by projections/assistant.ts over the flows and runs
 * read models, wired in app/container.ts). Every query is scoped: the assistant sees exactly what
 * the user it works for sees.
 */
export interface AssistantFlowSummary {
  id: string;
  name: string;
  description: string | null;
  archived: boolean;
  nodeCount: number;
  edgeCount: number;
  version: number;
  updatedAt: string;
}

export interface AssistantRunSummary {
  processId: string;
  flowId: string;
  mode: string;
  status: string;
  requestedAt: string;
  finishedAt: string | null;
}

export interface AssistantReads {
  listFlows(scope: ConversationScope, limit: number): Promise<AssistantFlowSummary[]>;
  /** The flow's public view (nodes, edges, trigger), or null when missing or not the user's. */
  getFlow(scope: ConversationScope, flowId: string): Promise<Record<string, unknown> | null>;
  /** Newest first; `flowId` null: the workspace's latest runs. */
  listRuns(scope: ConversationScope, flowId: string | null, limit: number): Promise<AssistantRunSummary[]>;
  /** The run's view as GET /processes/{id} gives it, or null. */
  getRun(scope: ConversationScope, processId: string): Promise<Record<string, unknown> | null>;
}
