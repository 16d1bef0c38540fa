import { fold } from '../shared/decider.js';
import { graphIndex, nextSteps, nodeInputs, nodeStateOf, renderValue, type RunNode, type TemplateContext } from '../runs/index.js';
import type { WorkflowEvent } from './events.js';
import { evolveWorkflow, isClosed, isWorkflowKind, runningWorkerNodes, type WorkflowState } from './state.js';

/**
 * What follows by itself from a step, decided with it (like the run's withConsequences): skips,
 * the workflow kinds that are ready (wait_signal, sleep, set_state, query: decided here, no worker),
 * signal delivery to waiting nodes in recording order, cancellation once no worker node is in
 * flight, and the workflow's end. Nothing starts while PAUSED or CREATED.
 */
const MAX_ROUNDS = 1000;

export const sleepTimerId = (nodeId: string, attempt: number) => `sleep:${nodeId}:${attempt}`;
export const signalTimeoutTimerId = (nodeId: string, attempt: number) => `signal_timeout:${nodeId}:${attempt}`;
export const executionTimeoutTimerId = (execution: number) => `execution_timeout:${execution}`;

export function advance(state: WorkflowState, events: WorkflowEvent[], at: string): WorkflowEvent[] {
  let s = fold(evolveWorkflow, state, events);
  const out = [...events];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const step = nextEvents(s, at);
    if (step.length === 0) break;
    s = fold(evolveWorkflow, s, step);
    out.push(...step);
  }
  return out;
}

function nextEvents(s: WorkflowState, at: string): WorkflowEvent[] {
  if (!s.exists || isClosed(s.status) || s.status === 'CREATED') return [];
  if (s.cancelRequested) {
    if (s.status === 'PAUSED' || runningWorkerNodes(s).length === 0) return [{ type: 'WorkflowCanceled', data: { by: s.cancelRequested.by, reason: s.cancelRequested.reason, at } }];
    return [];
  }
  const def = s.exec.definition;
  const steps = nextSteps(def, s.exec);
  if (steps.skip.length > 0) return steps.skip.map((k) => ({ type: 'WorkflowNodeSkipped', data: { nodeId: k.nodeId, reason: k.reason, at } }));
  if (steps.done) {
    if (steps.outcome === 'completed') return [{ type: 'WorkflowCompleted', data: { result: resultOf(s) as never, at } }];
    const f = steps.failure ?? { code: 'WORKFLOW_FAILED', reason: 'the workflow failed', nodeId: null };
    return [{ type: 'WorkflowFailed', data: { code: f.code, message: f.reason, nodeId: f.nodeId, at } }];
  }
  if (s.status !== 'RUNNING') return [];
  const byId = graphIndex(def).byId;
  // Signals to waiting nodes, oldest signal first.
  for (const id of steps.running) {
    const node = byId.get(id)!;
    if (node.data.nodeType !== 'wait_signal') continue;
    const signal = s.pendingSignals.find((p) => p.name === node.data.signalName);
    if (!signal) continue;
    const attempt = nodeStateOf(s.exec, id)!.attempts;
    const events: WorkflowEvent[] = [
      { type: 'SignalDelivered', data: { signalId: signal.signalId, nodeId: id, at } },
      completed(id, attempt, signal.payload, { signalId: signal.signalId, signalName: signal.name }, at),
    ];
    const timeout = s.timers[signalTimeoutTimerId(id, attempt)];
    if (timeout?.status === 'pending') events.push({ type: 'TimerCanceled', data: { timerId: timeout.timerId, reason: 'the signal arrived', at } });
    return events;
  }
  for (const id of steps.ready) {
    const node = byId.get(id)!;
    const kind = typeof node.data.nodeType === 'string' ? node.data.nodeType : null;
    if (!isWorkflowKind(kind)) continue;
    const attempt = (nodeStateOf(s.exec, id)?.attempts ?? 0) + 1;
    const started: WorkflowEvent = { type: 'WorkflowNodeStarted', data: { nodeId: id, attempt, workerId: null, at } };
    if (kind === 'set_state') return [started, ...setState(s, node, attempt, at)];
    // A declaration, answered when asked (view.ts answerQuery): it passes nothing on.
    if (kind === 'query') return [started, completed(id, attempt, null, { queryName: node.data.queryName }, at)];
    if (kind === 'sleep') {
      const fireAt = sleepUntil(node, at);
      return [started, { type: 'TimerScheduled', data: { timerId: sleepTimerId(id, attempt), name: id, kind: 'sleep', fireAt, signal: null, nodeId: id, at } }];
    }
    const timeoutMs = Number(node.data.timeoutMs);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) return [started];
    const fireAt = new Date(Date.parse(at) + timeoutMs).toISOString();
    return [started, { type: 'TimerScheduled', data: { timerId: signalTimeoutTimerId(id, attempt), name: `${String(node.data.signalName)} timeout`, kind: 'signal_timeout', fireAt, signal: null, nodeId: id, at } }];
  }
  return [];
}

export function completed(nodeId: string, attempt: number, output: unknown, metadata: Record<string, unknown>, at: string): WorkflowEvent {
  return {
    type: 'WorkflowNodeCompleted',
    data: { nodeId, attempt, output: (output ?? null) as never, metadata: metadata as never, conditionalResults: [], usage: { total_tokens: 0, cost: 0 }, executionTime: 0, at },
  };
}

function sleepUntil(node: RunNode, at: string): string {
  if (typeof node.data.until === 'string' && !Number.isNaN(Date.parse(node.data.until))) return new Date(Date.parse(node.data.until)).toISOString();
  const ms = Number(node.data.durationMs);
  return new Date(Date.parse(at) + (Number.isFinite(ms) && ms > 0 ? ms : 0)).toISOString();
}

/** `value` with every string that holds a placeholder rendered (set_state values, query results, continue_as_new inputs). */
export function renderDeep(value: unknown, context: TemplateContext): unknown {
  if (typeof value === 'string') return value.includes('{{') ? renderValue(value, context) : value;
  if (Array.isArray(value)) return value.map((v) => renderDeep(v, context));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderDeep(v, context)]));
  return value;
}

function setState(s: WorkflowState, node: RunNode, attempt: number, at: string): WorkflowEvent[] {
  const raw = node.data.values && typeof node.data.values === 'object' && !Array.isArray(node.data.values) ? (node.data.values as Record<string, unknown>) : {};
  let values: Record<string, unknown>;
  try {
    const context = { ...nodeInputs(s.exec.definition, s.exec, node.id), state: s.state };
    values = JSON.parse(JSON.stringify(renderDeep(raw, context) ?? {})) as Record<string, unknown>;
  } catch (err) {
    return [{ type: 'WorkflowNodeFailed', data: { nodeId: node.id, attempt, error: { code: 'TEMPLATE_ERROR', message: String((err as Error).message).slice(0, 2000) }, executionTime: 0, at } }];
  }
  return [{ type: 'WorkflowStateSet', data: { nodeId: node.id, values: values as never, at } }, completed(node.id, attempt, values, {}, at)];
}

/** The output of the node that completed last (ties: the later one in topological order); null when none did. */
export function resultOf(s: WorkflowState): unknown {
  let best: { at: string; output: unknown } | null = null;
  for (const id of graphIndex(s.exec.definition).order) {
    const n = nodeStateOf(s.exec, id);
    if (n?.status !== 'completed') continue;
    const finished = n.finishedAt ?? '';
    if (!best || finished >= best.at) best = { at: finished, output: n.output ?? null };
  }
  return best?.output ?? null;
}
