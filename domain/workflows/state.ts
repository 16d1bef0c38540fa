import { evolveRun, initialRunState, type FlowOrigin, type RunEvent, type RunState } from '../runs/index.js';
import type { IdempotencyPolicy, TimerKind, WorkflowEvent } from './events.js';

export const WORKFLOW_STATUSES = ['CREATED', 'RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'CANCELED', 'TERMINATED', 'TIMED_OUT'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];
export const CLOSED_STATUSES: readonly WorkflowStatus[] = ['COMPLETED', 'FAILED', 'CANCELED', 'TERMINATED', 'TIMED_OUT'];
export const isClosed = (status: WorkflowStatus) => CLOSED_STATUSES.includes(status);
/** The statuses of a workflow not closed yet (created, running, paused). */
export const OPEN_STATUSES: readonly WorkflowStatus[] = WORKFLOW_STATUSES.filter((s) => !isClosed(s));

/** The node kinds the workflow decider runs itself (no I/O): everything else runs on a worker. */
export const WORKFLOW_NODE_KINDS = ['wait_signal', 'sleep', 'set_state', 'query'] as const;
export type WorkflowNodeKind = (typeof WORKFLOW_NODE_KINDS)[number];

/** History length at which the workflow object warns (continue-as-new is the way out). */
export const HISTORY_WARNING_EVENTS = 10_240;

export interface PendingSignal {
  signalId: string;
  name: string;
  payload: unknown;
  requestId: string | null;
  at: string;
}

export interface TimerState {
  timerId: string;
  name: string;
  kind: TimerKind;
  fireAt: string;
  signal: { name: string; payload: unknown } | null;
  nodeId: string | null;
  status: 'pending' | 'fired' | 'canceled';
  createdAt: string;
  firedAt: string | null;
  canceledAt: string | null;
}

export interface ControlRecord {
  action: 'pause' | 'resume' | 'cancel' | 'terminate' | 'start' | 'continue_as_new';
  by: string | null;
  reason: string | null;
  at: string;
}

export interface WorkflowState extends FlowOrigin {
  exists: boolean;
  workflowId: string;
  execution: number;
  createdBy: string | null;
  status: WorkflowStatus;
  input: unknown;
  result: unknown;
  error: { code: string; message: string; nodeId: string | null } | null;
  state: Record<string, unknown>;
  pendingSignals: PendingSignal[];
  /** Signal request ids seen in this execution (dedupe). */
  requestIds: Record<string, string>;
  signalsReceived: number;
  timers: Record<string, TimerState>;
  searchAttributes: Record<string, string | number | boolean>;
  memo: Record<string, unknown>;
  idempotencyPolicy: IdempotencyPolicy;
  executionTimeoutMs: number | null;
  cancelRequested: { by: string | null; reason: string | null; at: string } | null;
  controls: ControlRecord[];
  continuedFrom: string | null;
  continuedAs: string | null;
  /** The node execution state the run scheduler reads (domain/runs/scheduler.ts). */
  exec: RunState;
  /** The worker holding the last regular node started (null when none runs). */
  workerId: string | null;
  createdAt: string;
  startedAt: string | null;
  closedAt: string | null;
  updatedAt: string;
  /** Revision of the last folded event (-1: none); the history length is version + 1. */
  version: number;
}

export const initialWorkflowState: WorkflowState = {
  exists: false,
  workflowId: '',
  execution: 0,
  flowId: '',
  flowVersion: 0,
  ownerId: '',
  orgId: null,
  workspaceId: null,
  createdBy: null,
  status: 'CREATED',
  input: null,
  result: null,
  error: null,
  state: {},
  pendingSignals: [],
  requestIds: {},
  signalsReceived: 0,
  timers: {},
  searchAttributes: {},
  memo: {},
  idempotencyPolicy: 'allow_duplicate',
  executionTimeoutMs: null,
  cancelRequested: null,
  controls: [],
  continuedFrom: null,
  continuedAs: null,
  exec: initialRunState,
  workerId: null,
  createdAt: '',
  startedAt: null,
  closedAt: null,
  updatedAt: '',
  version: -1,
};

export const nodeKindOf = (state: WorkflowState, nodeId: string): string | null => {
  const node = state.exec.definition.nodes.find((n) => n.id === nodeId);
  const t = node?.data.nodeType;
  return typeof t === 'string' ? t : null;
};
export const isWorkflowKind = (kind: string | null): kind is WorkflowNodeKind => kind !== null && (WORKFLOW_NODE_KINDS as readonly string[]).includes(kind);

/** Regular nodes (run by a worker) that are running now. */
export function runningWorkerNodes(state: WorkflowState): string[] {
  return Object.entries(state.exec.nodes)
    .filter(([id, n]) => n.status === 'running' && !isWorkflowKind(nodeKindOf(state, id)))
    .map(([id]) => id);
}

/** What the workflow waits on: a running wait_signal node, else a running sleep node. */
export function waitingOn(state: WorkflowState): { kind: 'signal' | 'timer'; name: string; nodeId: string; since: string } | null {
  if (isClosed(state.status)) return null;
  for (const n of state.exec.definition.nodes) {
    const ns = state.exec.nodes[n.id];
    if (ns?.status !== 'running') continue;
    if (n.data.nodeType === 'wait_signal') return { kind: 'signal', name: String(n.data.signalName ?? ''), nodeId: n.id, since: ns.startedAt ?? state.updatedAt };
    if (n.data.nodeType === 'sleep') return { kind: 'timer', name: n.id, nodeId: n.id, since: ns.startedAt ?? state.updatedAt };
  }
  return null;
}

const closeTimers = (timers: Record<string, TimerState>, at: string): Record<string, TimerState> =>
  Object.fromEntries(Object.entries(timers).map(([k, t]) => [k, t.status === 'pending' ? { ...t, status: 'canceled' as const, canceledAt: at } : t]));

const execWith = (exec: RunState, event: RunEvent): RunState => evolveRun(exec, event);

const zeroUsage = { total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 };

function closed(state: WorkflowState, status: WorkflowStatus, at: string, extra: Partial<WorkflowState> = {}): WorkflowState {
  const exec = execWith(state.exec, { type: 'RunStopped', data: { usage: zeroUsage, at } });
  return { ...state, status, exec, timers: closeTimers(state.timers, at), workerId: null, closedAt: at, updatedAt: at, ...extra };
}

/** Every event moves `version` on by one. */
export function evolveWorkflow(state: WorkflowState, event: WorkflowEvent): WorkflowState {
  return { ...apply(state, event), version: state.version + 1 };
}

function apply(s: WorkflowState, event: WorkflowEvent): WorkflowState {
  switch (event.type) {
    case 'WorkflowCreated': {
      const d = event.data;
      const exec = evolveRun(initialRunState, {
        type: 'RunRequested',
        data: {
          processId: d.workflowId, flowId: d.flowId, flowVersion: d.flowVersion, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId,
          mode: 'flow', nodeId: null, inputs: inputsOf(d.input), async: true, requestedBy: d.createdBy, source: 'workflow',
          saveToHistory: false, overrideConfig: null, idempotencyKey: null, definition: d.definition, at: d.at,
        },
      } as RunEvent);
      return {
        ...initialWorkflowState,
        exists: true,
        workflowId: d.workflowId,
        execution: d.execution,
        flowId: d.flowId,
        flowVersion: d.flowVersion,
        ownerId: d.ownerId,
        orgId: d.orgId,
        workspaceId: d.workspaceId,
        createdBy: d.createdBy,
        input: d.input,
        state: d.state,
        searchAttributes: d.searchAttributes,
        memo: d.memo,
        idempotencyPolicy: d.idempotencyPolicy,
        executionTimeoutMs: d.executionTimeoutMs,
        continuedFrom: d.continuedFrom,
        exec,
        createdAt: d.at,
        updatedAt: d.at,
        version: s.version,
      };
    }
    case 'WorkflowStarted': {
      const exec = execWith(s.exec, { type: 'RunStarted', data: { workerId: 'workflow', at: event.data.at } });
      return { ...s, status: 'RUNNING', exec, startedAt: event.data.at, updatedAt: event.data.at, controls: [...s.controls, { action: 'start', by: event.data.by, reason: null, at: event.data.at }] };
    }
    case 'WorkflowNodeStarted': {
      const { nodeId, attempt, workerId, at } = event.data;
      const exec = execWith(s.exec, { type: 'NodeStarted', data: { nodeId, attempt, at } });
      return { ...s, exec, workerId: workerId ?? s.workerId, updatedAt: at };
    }
    case 'WorkflowNodeCompleted': {
      const exec = execWith(s.exec, { type: 'NodeCompleted', data: event.data });
      return withWorker({ ...s, exec, updatedAt: event.data.at });
    }
    case 'WorkflowNodeFailed': {
      const exec = execWith(s.exec, { type: 'NodeFailed', data: event.data });
      return withWorker({ ...s, exec, updatedAt: event.data.at });
    }
    case 'WorkflowNodeSkipped':
      return { ...s, exec: execWith(s.exec, { type: 'NodeSkipped', data: event.data }), updatedAt: event.data.at };
    case 'WorkflowNodesInterrupted': {
      const { nodeIds, at } = event.data;
      const exec = execWith(s.exec, { type: 'RunResumed', data: { workerId: 'workflow', previousWorkerId: null, interruptedNodeIds: nodeIds, at } });
      return { ...s, exec, workerId: null, updatedAt: at };
    }
    case 'WorkflowStateSet':
      return { ...s, state: { ...s.state, ...event.data.values }, updatedAt: event.data.at };
    case 'SignalReceived': {
      const { signalId, name, payload, requestId, at } = event.data;
      const requestIds = requestId ? { ...s.requestIds, [requestId]: signalId } : s.requestIds;
      return { ...s, pendingSignals: [...s.pendingSignals, { signalId, name, payload, requestId, at }], requestIds, signalsReceived: s.signalsReceived + 1, updatedAt: at };
    }
    case 'SignalDelivered':
      return { ...s, pendingSignals: s.pendingSignals.filter((p) => p.signalId !== event.data.signalId), updatedAt: event.data.at };
    case 'TimerScheduled': {
      const d = event.data;
      const timer: TimerState = { timerId: d.timerId, name: d.name, kind: d.kind, fireAt: d.fireAt, signal: d.signal, nodeId: d.nodeId, status: 'pending', createdAt: d.at, firedAt: null, canceledAt: null };
      return { ...s, timers: { ...s.timers, [d.timerId]: timer }, updatedAt: d.at };
    }
    case 'TimerFired': {
      const t = s.timers[event.data.timerId];
      if (!t) return s;
      return { ...s, timers: { ...s.timers, [t.timerId]: { ...t, status: 'fired', firedAt: event.data.at } }, updatedAt: event.data.at };
    }
    case 'TimerCanceled': {
      const t = s.timers[event.data.timerId];
      if (!t) return s;
      return { ...s, timers: { ...s.timers, [t.timerId]: { ...t, status: 'canceled', canceledAt: event.data.at } }, updatedAt: event.data.at };
    }
    case 'WorkflowPaused': {
      const { by, reason, at } = event.data;
      return { ...s, status: 'PAUSED', updatedAt: at, controls: [...s.controls, { action: 'pause', by, reason, at }] };
    }
    case 'WorkflowResumed': {
      const { by, reason, at } = event.data;
      return { ...s, status: 'RUNNING', updatedAt: at, controls: [...s.controls, { action: 'resume', by, reason, at }] };
    }
    case 'WorkflowCancelRequested': {
      const { by, reason, at } = event.data;
      const exec = execWith(s.exec, { type: 'RunStopRequested', data: { by, at } });
      return { ...s, exec, cancelRequested: { by, reason, at }, updatedAt: at, controls: [...s.controls, { action: 'cancel', by, reason, at }] };
    }
    case 'WorkflowCanceled':
      return closed(s, 'CANCELED', event.data.at, { error: { code: 'CANCELED', message: event.data.reason ?? 'canceled', nodeId: null } });
    case 'WorkflowTerminated': {
      const { by, reason, at } = event.data;
      return closed(s, 'TERMINATED', at, { error: { code: 'TERMINATED', message: reason ?? 'terminated', nodeId: null }, controls: [...s.controls, { action: 'terminate', by, reason, at }] });
    }
    case 'WorkflowCompleted':
      return closed(s, 'COMPLETED', event.data.at, { result: event.data.result });
    case 'WorkflowFailed': {
      const { code, message, nodeId, at } = event.data;
      return closed(s, 'FAILED', at, { error: { code, message, nodeId } });
    }
    case 'WorkflowTimedOut':
      return closed(s, 'TIMED_OUT', event.data.at, { error: { code: 'WORKFLOW_TIMED_OUT', message: `the workflow ran longer than ${event.data.timeoutMs} ms`, nodeId: null } });
    case 'WorkflowContinuedAsNew': {
      const { newWorkflowId, by, at } = event.data;
      return closed(s, 'COMPLETED', at, {
        continuedAs: newWorkflowId,
        result: { continuedAs: newWorkflowId },
        controls: [...s.controls, { action: 'continue_as_new', by, reason: null, at }],
      });
    }
    default:
      return s;
  }
}

function withWorker(s: WorkflowState): WorkflowState {
  return runningWorkerNodes(s).length === 0 ? { ...s, workerId: null } : s;
}

/** The run-style `inputs` of the workflow's input: an object as is, anything else under `input`. */
export function inputsOf(input: unknown): Record<string, unknown> {
  return input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
}
