import { validationFailed } from '../flows/guards.js';
import { nextSteps, nodeStateOf, toRunDefinition, MAX_NODE_ATTEMPTS, MAX_NODE_EVENT_BYTES } from '../runs/index.js';
import type { WorkflowCommand, WorkflowCommandOf } from './commands.js';
import { advance, completed, executionTimeoutTimerId } from './advance.js';
import { workflowError, workflowNotFound } from './errors.js';
import type { WorkflowEvent } from './events.js';
import { evolveWorkflow, isClosed, isWorkflowKind, nodeKindOf, runningWorkerNodes, type WorkflowState } from './state.js';
import { fold } from '../shared/decider.js';

export const workflowStreamId = (workflowId: string) => `workflow-${workflowId}`;

/** Serialized size of what one workflow execution starts with (definition, input, state, memo). */
export const MAX_WORKFLOW_CREATE_BYTES = 768 * 1024;
const encoder = new TextEncoder();
const jsonBytes = (v: unknown) => encoder.encode(JSON.stringify(v ?? null)).length;

export function decideWorkflow(command: WorkflowCommand, state: WorkflowState): WorkflowEvent[] {
  if (command.type === 'CreateWorkflow') return create(command, state);
  if (!state.exists) throw workflowNotFound();
  switch (command.type) {
    case 'StartWorkflow':
      requireOpen(state);
      if (state.status !== 'CREATED') return [];
      return start(state, command.by, command.at);
    case 'SignalWorkflow':
      return signal(command, state);
    case 'StartNode':
      return startNode(command, state);
    case 'CompleteNode':
    case 'FailNode':
      return finishNode(command, state);
    case 'InterruptNodes':
      return interrupt(command, state);
    case 'ScheduleTimer': {
      requireOpen(state);
      if (state.timers[command.timerId]) throw workflowError('TIMER_ID_TAKEN', `timer ${command.timerId} exists`, { timerId: command.timerId });
      const { timerId, name, fireAt, signal, at } = command;
      return [{ type: 'TimerScheduled', data: { timerId, name, kind: 'user', fireAt, signal: signal as never, nodeId: null, at } }];
    }
    case 'FireTimer':
      return fireTimer(command, state);
    case 'CancelTimer': {
      const t = state.timers[command.timerId];
      if (!t) throw workflowError('WORKFLOW_TIMER_NOT_FOUND', `timer ${command.timerId} not found`, { timerId: command.timerId });
      if (t.status === 'fired') throw workflowError('TIMER_ALREADY_FIRED', `timer ${t.timerId} fired at ${t.firedAt}`, { timerId: t.timerId, firedAt: t.firedAt });
      if (t.status === 'canceled') return [];
      if (t.kind !== 'user') throw workflowError('TIMER_NOT_CANCELABLE', `timer ${t.timerId} belongs to the workflow (${t.kind}); cancel the workflow instead`, { timerId: t.timerId, kind: t.kind });
      return [{ type: 'TimerCanceled', data: { timerId: t.timerId, reason: 'canceled by request', at: command.at } }];
    }
    case 'PauseWorkflow':
      requireOpen(state);
      if (state.status !== 'RUNNING') throw workflowError('WORKFLOW_NOT_RUNNING', `workflow ${state.workflowId} is ${state.status}: only a RUNNING workflow pauses`, { status: state.status });
      return [{ type: 'WorkflowPaused', data: { by: command.by, reason: command.reason, at: command.at } }];
    case 'ResumeWorkflow':
      return resume(command, state);
    case 'CancelWorkflow':
      return cancel(command, state);
    case 'ContinueAsNew':
      requireOpen(state);
      return [{ type: 'WorkflowContinuedAsNew', data: { newWorkflowId: command.newWorkflowId, by: command.by, at: command.at } }];
  }
}

function requireOpen(state: WorkflowState) {
  if (isClosed(state.status)) throw workflowError('WORKFLOW_CLOSED', `workflow ${state.workflowId} is ${state.status}`, { status: state.status });
}

function create(c: WorkflowCommandOf<'CreateWorkflow'>, state: WorkflowState): WorkflowEvent[] {
  if (state.exists) {
    const details = { workflowId: c.workflowId, status: state.status, idempotencyPolicy: c.idempotencyPolicy };
    if (!isClosed(state.status)) throw workflowError('WORKFLOW_ALREADY_STARTED', `workflow ${c.workflowId} is open (${state.status})`, details);
    if (c.idempotencyPolicy === 'reject_duplicate') throw workflowError('WORKFLOW_ALREADY_STARTED', `workflow id ${c.workflowId} was used before and the policy is reject_duplicate`, details);
    if (c.idempotencyPolicy === 'allow_duplicate_failed_only' && state.status === 'COMPLETED') {
      throw workflowError('WORKFLOW_ALREADY_STARTED', `workflow ${c.workflowId} completed; allow_duplicate_failed_only reuses only failed, canceled, terminated or timed-out ids`, details);
    }
  }
  if (c.nodes.length === 0) throw workflowError('FLOW_HAS_NO_NODES', `flow ${c.flowId} has no nodes to run`);
  const created: WorkflowEvent = {
    type: 'WorkflowCreated',
    data: {
      workflowId: c.workflowId,
      execution: state.execution + 1,
      flowId: c.flowId,
      flowVersion: c.flowVersion,
      ownerId: c.ownerId,
      orgId: c.orgId,
      workspaceId: c.workspaceId,
      createdBy: c.createdBy,
      input: (c.input ?? null) as never,
      searchAttributes: c.searchAttributes,
      memo: c.memo as never,
      idempotencyPolicy: c.idempotencyPolicy,
      executionTimeoutMs: c.executionTimeoutMs ?? null,
      definition: toRunDefinition(c.nodes, c.edges) as never,
      state: (c.state ?? {}) as never,
      continuedFrom: c.continuedFrom ?? null,
      at: c.at,
    },
  };
  const bytes = jsonBytes(created.data);
  if (bytes > MAX_WORKFLOW_CREATE_BYTES) throw workflowError('LIMIT_EXCEEDED', `a workflow starts with at most ${MAX_WORKFLOW_CREATE_BYTES} bytes (this is ${bytes})`, { limit: 'workflowCreateBytes', max: MAX_WORKFLOW_CREATE_BYTES, actual: bytes });
  if (!c.start) return [created];
  return start(state, c.createdBy, c.at, [created]);
}

function start(state: WorkflowState, by: string | null, at: string, before: WorkflowEvent[] = []): WorkflowEvent[] {
  const events: WorkflowEvent[] = [...before, { type: 'WorkflowStarted', data: { by, at } }];
  const created = before.find((e) => e.type === 'WorkflowCreated');
  const timeoutMs = created?.type === 'WorkflowCreated' ? created.data.executionTimeoutMs : state.executionTimeoutMs;
  const execution = created?.type === 'WorkflowCreated' ? created.data.execution : state.execution;
  if (timeoutMs) {
    const fireAt = new Date(Date.parse(at) + timeoutMs).toISOString();
    events.push({ type: 'TimerScheduled', data: { timerId: executionTimeoutTimerId(execution), name: 'execution timeout', kind: 'execution_timeout', fireAt, signal: null, nodeId: null, at } });
  }
  return advance(state, events, at);
}

function signal(c: WorkflowCommandOf<'SignalWorkflow'>, state: WorkflowState): WorkflowEvent[] {
  requireOpen(state);
  if (c.name === '__start') return state.status === 'CREATED' ? start(state, c.by, c.at) : [];
  if (c.requestId && Object.hasOwn(state.requestIds, c.requestId)) return [];
  const bytes = jsonBytes(c.payload);
  if (bytes > MAX_NODE_EVENT_BYTES) throw workflowError('LIMIT_EXCEEDED', `a signal payload holds at most ${MAX_NODE_EVENT_BYTES} bytes`, { limit: 'signalPayloadBytes', max: MAX_NODE_EVENT_BYTES, actual: bytes });
  const received: WorkflowEvent = { type: 'SignalReceived', data: { signalId: c.signalId, name: c.name, payload: (c.payload ?? null) as never, requestId: c.requestId, by: c.by, at: c.at } };
  return advance(state, [received], c.at);
}

function startNode(c: WorkflowCommandOf<'StartNode'>, state: WorkflowState): WorkflowEvent[] {
  requireOpen(state);
  if (state.status !== 'RUNNING') throw workflowError('WORKFLOW_NOT_RUNNING', `workflow ${state.workflowId} is ${state.status}: no node starts`, { status: state.status });
  if (state.cancelRequested) throw workflowError('WORKFLOW_CANCEL_REQUESTED', `workflow ${state.workflowId} is being canceled`);
  if (isWorkflowKind(nodeKindOf(state, c.nodeId)) || !nextSteps(state.exec.definition, state.exec).ready.includes(c.nodeId)) {
    throw workflowError('NODE_NOT_READY', `node ${c.nodeId} cannot start now`, { nodeId: c.nodeId, status: nodeStateOf(state.exec, c.nodeId)?.status ?? null });
  }
  const attempt = (nodeStateOf(state.exec, c.nodeId)?.attempts ?? 0) + 1;
  return [{ type: 'WorkflowNodeStarted', data: { nodeId: c.nodeId, attempt, workerId: c.workerId, at: c.at } }];
}

function finishNode(c: WorkflowCommandOf<'CompleteNode'> | WorkflowCommandOf<'FailNode'>, state: WorkflowState): WorkflowEvent[] {
  requireOpen(state);
  const node = nodeStateOf(state.exec, c.nodeId);
  if (!node || node.status !== 'running') throw workflowError('NODE_NOT_RUNNING', `node ${c.nodeId} is not running`, { nodeId: c.nodeId, status: node?.status ?? null });
  if (node.attempts !== c.attempt) throw workflowError('STALE_ATTEMPT', `node ${c.nodeId} is on attempt ${node.attempts}, not ${c.attempt}`, { nodeId: c.nodeId, attempt: node.attempts });
  if (c.type === 'FailNode') {
    const error = { code: c.error.code, message: c.error.message.slice(0, 10_000), ...(c.error.provider !== undefined && { provider: c.error.provider }) };
    return advance(state, [{ type: 'WorkflowNodeFailed', data: { nodeId: c.nodeId, attempt: c.attempt, error, executionTime: c.executionTime, at: c.at } }], c.at);
  }
  let output: unknown;
  try {
    output = JSON.parse(JSON.stringify(c.output ?? null));
  } catch {
    throw validationFailed([{ field: 'output', message: 'must be JSON' }]);
  }
  const bytes = jsonBytes(output) + jsonBytes(c.metadata ?? {});
  if (bytes > MAX_NODE_EVENT_BYTES) throw workflowError('OUTPUT_TOO_LARGE', `node ${c.nodeId} produced ${bytes} bytes of output; at most ${MAX_NODE_EVENT_BYTES} fit in an event`, { nodeId: c.nodeId, max: MAX_NODE_EVENT_BYTES, actual: bytes });
  const event = completed(c.nodeId, c.attempt, output, JSON.parse(JSON.stringify(c.metadata ?? {})), c.at);
  if (event.type === 'WorkflowNodeCompleted') {
    event.data.conditionalResults = c.conditionalResults ?? [];
    event.data.usage = c.usage ?? { total_tokens: 0, cost: 0 };
    event.data.executionTime = c.executionTime;
  }
  return advance(state, [event], c.at);
}

function interrupt(c: WorkflowCommandOf<'InterruptNodes'>, state: WorkflowState): WorkflowEvent[] {
  if (isClosed(state.status)) return [];
  const nodes = runningWorkerNodes(state);
  if (nodes.length === 0) return [];
  const max = c.maxAttempts ?? MAX_NODE_ATTEMPTS;
  const exhausted = nodes.find((id) => (nodeStateOf(state.exec, id)?.attempts ?? 0) >= max);
  if (exhausted) {
    const message = `node ${exhausted} was interrupted ${max} times (its worker stopped while it ran); not retried again`;
    return [{ type: 'WorkflowFailed', data: { code: 'NODE_INTERRUPTED_TOO_OFTEN', message, nodeId: exhausted, at: c.at } }];
  }
  return advance(state, [{ type: 'WorkflowNodesInterrupted', data: { nodeIds: nodes, previousWorkerId: c.previousWorkerId, at: c.at } }], c.at);
}

/** The events of one timer firing (TimerFired and what it causes), without the consequences. */
function firing(state: WorkflowState, timerId: string, at: string): WorkflowEvent[] {
  const t = state.timers[timerId];
  const lateMs = Math.max(0, Date.parse(at) - Date.parse(t.fireAt));
  const events: WorkflowEvent[] = [{ type: 'TimerFired', data: { timerId, lateMs, at } }];
  const node = t.nodeId ? nodeStateOf(state.exec, t.nodeId) : undefined;
  if (t.kind === 'sleep' && t.nodeId && node?.status === 'running') events.push(completed(t.nodeId, node.attempts, { firedAt: at, fireAt: t.fireAt }, { timerId }, at));
  if (t.kind === 'signal_timeout' && t.nodeId && node?.status === 'running') {
    events.push({ type: 'WorkflowNodeFailed', data: { nodeId: t.nodeId, attempt: node.attempts, error: { code: 'SIGNAL_TIMEOUT', message: `no signal ${t.name.replace(/ timeout$/, '')} arrived in time` }, executionTime: 0, at } });
  }
  if (t.kind === 'execution_timeout') events.push({ type: 'WorkflowTimedOut', data: { timeoutMs: state.executionTimeoutMs ?? 0, at } });
  if (t.kind === 'user' && t.signal) {
    events.push({ type: 'SignalReceived', data: { signalId: `timer:${timerId}`, name: t.signal.name, payload: (t.signal.payload ?? null) as never, requestId: null, by: null, at } });
  }
  return events;
}

/** Fires a due timer once: a fired, canceled or not-yet-due timer is no event, and so is any timer of a paused workflow (it fires on resume). */
function fireTimer(c: WorkflowCommandOf<'FireTimer'>, state: WorkflowState): WorkflowEvent[] {
  const t = state.timers[c.timerId];
  if (!t) throw workflowError('WORKFLOW_TIMER_NOT_FOUND', `timer ${c.timerId} not found`, { timerId: c.timerId });
  if (t.status !== 'pending' || isClosed(state.status) || state.status === 'PAUSED') return [];
  if (Date.parse(t.fireAt) > Date.parse(c.at)) return [];
  return advance(state, firing(state, t.timerId, c.at), c.at);
}

function resume(c: WorkflowCommandOf<'ResumeWorkflow'>, state: WorkflowState): WorkflowEvent[] {
  requireOpen(state);
  if (state.status === 'CREATED') return start(state, c.by, c.at);
  if (state.status !== 'PAUSED') throw workflowError('WORKFLOW_NOT_PAUSED', `workflow ${state.workflowId} is ${state.status}, not PAUSED`, { status: state.status });
  const events: WorkflowEvent[] = [{ type: 'WorkflowResumed', data: { by: c.by, reason: c.reason, at: c.at } }];
  // Timers that came due while paused fire now, earliest first.
  let s: WorkflowState = { ...state, status: 'RUNNING' };
  const due = Object.values(state.timers)
    .filter((t) => t.status === 'pending' && Date.parse(t.fireAt) <= Date.parse(c.at))
    .sort((a, b) => a.fireAt.localeCompare(b.fireAt));
  for (const t of due) {
    if (isClosed(s.status)) break;
    const fired = firing(s, t.timerId, c.at);
    events.push(...fired);
    s = fold(evolveWorkflow, s, fired);
  }
  return advance(state, events, c.at);
}


function cancel(c: WorkflowCommandOf<'CancelWorkflow'>, state: WorkflowState): WorkflowEvent[] {
  requireOpen(state);
  if (c.terminate) return [{ type: 'WorkflowTerminated', data: { by: c.by, reason: c.reason, at: c.at } }];
  if (state.cancelRequested) return [];
  if (state.status === 'CREATED') return [{ type: 'WorkflowCancelRequested', data: { by: c.by, reason: c.reason, at: c.at } }, { type: 'WorkflowCanceled', data: { by: c.by, reason: c.reason, at: c.at } }];
  return advance(state, [{ type: 'WorkflowCancelRequested', data: { by: c.by, reason: c.reason, at: c.at } }], c.at);
}
