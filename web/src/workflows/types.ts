/** The shapes of the workflow answers (domain/workflows/view.ts): the OpenAPI document types them loosely. */
export const WORKFLOW_STATUSES = ['CREATED', 'RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'CANCELED', 'TERMINATED', 'TIMED_OUT'] as const;
const FINAL = ['COMPLETED', 'FAILED', 'CANCELED', 'TERMINATED', 'TIMED_OUT', 'CONTINUED_AS_NEW'];
export const isFinalWorkflow = (status: string) => FINAL.includes(status);

export interface WorkflowView {
  id: string;
  execution?: number;
  flowId: string;
  status: string;
  input: unknown;
  result?: unknown;
  error?: { code?: string; message?: string };
  state: Record<string, unknown>;
  pendingSignals: Array<{ signalId: string; name: string; payload: unknown; receivedAt: string }>;
  waitingOn?: { kind: string; name: string; nodeId: string; since: string };
  nodes: Array<{ nodeId: string; nodeType: string | null; status: string; attempts: number; output?: unknown; error: { code?: string; message?: string } | null }>;
  cancelRequested: boolean;
  continuedAs?: string | null;
  historyLength: number;
  createdAt: string;
  startedAt: string | null;
  closedAt: string | null;
  updatedAt?: string;
}

export interface WorkflowPage {
  items: WorkflowView[];
  nextCursor: string | null;
}

/** One event of GET /workflows/{id}/history, and the data of a frame of its live stream. */
export interface HistoryEvent {
  eventId: number;
  type: string;
  data: Record<string, unknown>;
  occurredAt: string;
  actorId: string | null;
}
