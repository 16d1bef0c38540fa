import type { ConditionalResult, FlowSnapshot, NodeError, NodeUsage } from '../runs/index.js';
import type { IdempotencyPolicy } from './events.js';

/** Commands of the workflow aggregate (stream `workflow-<id>`). Ids and time come in the command. */
interface Base {
  at: string;
}

export interface CreateWorkflowCommand extends Base, FlowSnapshot {
  type: 'CreateWorkflow';
  workflowId: string;
  createdBy: string | null;
  input: unknown;
  start: boolean;
  idempotencyPolicy: IdempotencyPolicy;
  searchAttributes: Record<string, string | number | boolean>;
  memo: Record<string, unknown>;
  executionTimeoutMs?: number | null;
  /** Carried over by continue-as-new. */
  state?: Record<string, unknown>;
  continuedFrom?: string | null;
}

export type WorkflowCommand =
  | CreateWorkflowCommand
  | (Base & { type: 'StartWorkflow'; by: string | null })
  /** A signal named `__start` starts a CREATED workflow instead of being recorded. */
  | (Base & { type: 'SignalWorkflow'; signalId: string; name: string; payload: unknown; requestId: string | null; by: string | null })
  | (Base & { type: 'StartNode'; nodeId: string; workerId: string })
  | (Base & {
      type: 'CompleteNode';
      nodeId: string;
      attempt: number;
      output: unknown;
      metadata?: Record<string, unknown>;
      conditionalResults?: ConditionalResult[];
      usage?: NodeUsage;
      executionTime: number;
    })
  | (Base & { type: 'FailNode'; nodeId: string; attempt: number; error: NodeError; executionTime: number })
  /** The worker holding the workflow's nodes was judged dead: its nodes start again (up to maxAttempts). */
  | (Base & { type: 'InterruptNodes'; previousWorkerId: string | null; maxAttempts?: number })
  | (Base & { type: 'ScheduleTimer'; timerId: string; name: string; fireAt: string; signal: { name: string; payload: unknown } | null })
  | (Base & { type: 'FireTimer'; timerId: string })
  | (Base & { type: 'CancelTimer'; timerId: string })
  | (Base & { type: 'PauseWorkflow'; by: string | null; reason: string | null })
  | (Base & { type: 'ResumeWorkflow'; by: string | null; reason: string | null })
  | (Base & { type: 'CancelWorkflow'; by: string | null; reason: string | null; terminate: boolean })
  | (Base & { type: 'ContinueAsNew'; newWorkflowId: string; by: string | null });

export type WorkflowCommandOf<T extends WorkflowCommand['type']> = Extract<WorkflowCommand, { type: T }>;
