import { createHash, randomUUID } from 'node:crypto';
import type { CommandContext } from '../commands/handle.js';
import { cachedWorkflow, continueAsNew, executeWorkflowCommand, executeWorkflowCommands, loadWorkflow } from '../commands/workflows.js';
import { openSecretVariables } from '../domain/flows/secrets.js';
import { graphIndex, nextSteps, nodeInputs, nodeStateOf } from '../domain/runs/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { isWorkflowKind, renderDeep, type WorkflowCommand, type WorkflowState } from '../domain/workflows/index.js';
import type { Consumer } from '../ports/bus.js';
import type { WorkflowTimers } from '../ports/workflows.js';
import { abortableSleep, executeNodeKind, nodeDeadline, nodeErrorOf, runsLocally, settlesThisTurn, type RunEnginePorts } from './runs-executor.js';
import { nodeKindsFor } from './runs-kinds/index.js';
import { llmCapabilityFor } from './runs-llm.js';
import { ATTR, inSpan, linksTo, tracingEnabled } from '../lib/tracing.js';

export interface WorkflowWorkerPorts extends Omit<RunEnginePorts, 'executions'> {
  timers: WorkflowTimers;
  /** This service's worker id (the run executor's, its presence id): the workflow worker's id ends with it. */
  localWorkerId: string;
}

/**
 * Drives workflows (stream `workflow-<id>`). After each of a workflow's events it asks the
 * scheduler (domain/runs/scheduler.ts, over the workflow's node state) which regular nodes are
 * ready, starts them on the stream (StartNode, fenced by this worker's id) and executes them with
 * the run engine's node kinds, recording CompleteNode / FailNode. wait_signal, sleep, set_state and
 * query are decided by the aggregate itself and never reach here; continue_as_new starts the next
 * execution here (continueNode). Cancel, terminate and the other ends
 * abort in-flight calls of that workflow the way a run stop does: one AbortController per workflow,
 * aborted by the event. TimerScheduled is handed to the timers (held if due soon).
 */

/** The workflows whose nodes a worker is executing, each with the controller its end aborts: one per workflow worker. */
export class WorkflowsInFlight {
  private readonly slots = new Map<string, { controller: AbortController; nodes: Set<string> }>();

  isDriving(workflowId: string): boolean {
    return this.slots.has(workflowId);
  }

  abort(workflowId: string, reason: string): void {
    this.slots.get(workflowId)?.controller.abort(new Error(reason));
  }

  /** The workflow's slot: its controller and the nodes executing (created on the first node). */
  slot(workflowId: string) {
    let slot = this.slots.get(workflowId);
    if (!slot) this.slots.set(workflowId, (slot = { controller: new AbortController(), nodes: new Set() }));
    return slot;
  }

  /** The nodes executing of the workflow (none: an empty set). */
  nodes(workflowId: string): ReadonlySet<string> {
    return this.slots.get(workflowId)?.nodes ?? new Set();
  }

  /** A node ended: the slot goes with its last node. */
  nodeEnded(workflowId: string, slot: { nodes: Set<string> }, nodeId: string): void {
    slot.nodes.delete(nodeId);
    if (slot.nodes.size === 0 && this.slots.get(workflowId) === slot) this.slots.delete(workflowId);
  }
}

const ENDING = new Set(['WorkflowCanceled', 'WorkflowTerminated', 'WorkflowTimedOut', 'WorkflowFailed', 'WorkflowContinuedAsNew', 'WorkflowCancelRequested']);

export function workflowWorker(ports: WorkflowWorkerPorts, workerName: string): Consumer {
  const workerId = `${workerName}@${ports.localWorkerId}`;
  // This consumer's own: only the events it is delivered abort the nodes it started.
  const inFlight = new WorkflowsInFlight();
  ports.timers.startWorker();
  return {
    name: 'workflow-worker',
    categories: ['workflow'],
    async handle(event: RecordedEvent) {
      const workflowId = event.streamId.slice('workflow-'.length);
      if (event.type === 'TimerScheduled') {
        const d = event.data as { timerId: string; fireAt: string };
        ports.timers.schedule(workflowId, d.timerId, d.fireAt);
      }
      if (ENDING.has(event.type)) inFlight.abort(workflowId, event.type === 'WorkflowCancelRequested' ? 'the workflow is being canceled' : `the workflow ended (${event.type})`);
      await drive(ports, inFlight, workflowId, workerId, event);
    },
  };
}

function contextOf(ports: WorkflowWorkerPorts, s: WorkflowState, correlationId: string, causationId: string | null): CommandContext {
  return { actorId: null, orgId: s.orgId, workspaceId: s.workspaceId, correlationId, causationId, requestId: null, now: ports.clock.now() };
}

/** Starts the regular nodes that are ready now; each runs in the background. */
export async function drive(ports: WorkflowWorkerPorts, inFlight: WorkflowsInFlight, workflowId: string, workerId: string, cause?: RecordedEvent) {
  // The state this process already holds when it includes the event (this process wrote it, or
  // read past it): no read of the stream's tail per event. Events it does not hold yet come later
  // and drive again.
  const cached = cachedWorkflow(ports.eventStore, workflowId);
  const { state } = cached && cause && cached.revision >= cause.revision ? cached : await loadWorkflow(ports.eventStore, workflowId);
  if (!state.exists || state.status !== 'RUNNING' || state.cancelRequested) return;
  const ready = nextSteps(state.exec.definition, state.exec).ready.filter((id) => !isWorkflowKind(nodeKindOf(state, id)));
  if (ready.length === 0) return;
  const correlationId = cause?.metadata.correlationId ?? randomUUID();
  const trace = await traceOf(ports, workflowId, cause);
  const kinds = nodeKindsFor(ports);
  for (const nodeId of ready) {
    const executing = inFlight.nodes(workflowId);
    if (executing.has(nodeId)) continue;
    if (executing.size >= ports.settings.RUN_CONCURRENCY) break;
    const node = graphIndex(state.exec.definition).byId.get(nodeId)!;
    if (nodeKindOf(state, nodeId) !== 'continue_as_new' && runsLocally(kinds, node, node.data)) {
      // Runs here and reaches nothing outside: its start and its end are appended together. Nothing
      // fences it before it runs, so the state this drive read may be older than a run of it that
      // ended meanwhile: checked again on the newest state this process knows, with no await
      // between the check and taking the slot.
      const newest = cachedWorkflow(ports.eventStore, workflowId)?.state ?? state;
      if (newest.status !== 'RUNNING' || newest.cancelRequested || !nextSteps(newest.exec.definition, newest.exec).ready.includes(nodeId)) continue;
      launch(newest, nodeId, workerId);
      continue;
    }
    let started;
    try {
      started = await executeWorkflowCommand(ports.eventStore, contextOf(ports, state, correlationId, cause?.id ?? null), workflowId, { type: 'StartNode', nodeId, workerId });
    } catch (err) {
      if (err instanceof DomainError) continue; // another worker started it, or the workflow moved on
      throw err;
    }
    if (nodeKindOf(started.state, nodeId) === 'continue_as_new') {
      await continueNode(ports, started.state, nodeId, correlationId);
      return; // this execution is closed: nothing else of it starts
    }
    launch(started.state, nodeId);
  }

  /** Runs the node in the background, in the workflow's slot (its abort, its count of nodes in flight). */
  function launch(on: WorkflowState, nodeId: string, localWorker?: string) {
    const slot = inFlight.slot(workflowId);
    slot.nodes.add(nodeId);
    void runNode(ports, on, nodeId, slot.controller.signal, correlationId, trace, localWorker)
      .catch((err) => ports.logger.error({ workflowId, nodeId, err: (err as Error).message }, 'workflow node failed to record'))
      .finally(() => inFlight.nodeEnded(workflowId, slot, nodeId));
  }
}

const nodeKindOf = (state: WorkflowState, nodeId: string): string | null => {
  const kind = graphIndex(state.exec.definition).byId.get(nodeId)?.data.nodeType;
  return typeof kind === 'string' ? kind : null;
};

/**
 * The id of the execution a continue_as_new node starts: derived from this workflow and the node,
 * so a redelivered event or a second worker names the same one and never starts two.
 */
export function continuationId(workflowId: string, nodeId: string): string {
  const h = createHash('sha256').update(`continue-as-new\0${workflowId}\0${nodeId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * A continue_as_new node: the next execution starts with the node's input (rendered over this
 * one's state and outputs; default the same input), carrying state, search attributes and memo,
 * then this one closes naming it (commands/workflows.ts continueAsNew). Done again after a crash
 * between the two, the next execution already exists: only the close is left.
 */
async function continueNode(ports: WorkflowWorkerPorts, state: WorkflowState, nodeId: string, correlationId: string) {
  const workflowId = state.workflowId;
  const node = graphIndex(state.exec.definition).byId.get(nodeId)!;
  const ctx = contextOf(ports, state, correlationId, null);
  const nextId = continuationId(workflowId, nodeId);
  const begin = performance.now();
  let input: unknown;
  try {
    input = node.data.input === undefined ? undefined : renderDeep(node.data.input, { ...nodeInputs(state.exec.definition, state.exec, nodeId), state: state.state });
  } catch (err) {
    const error = { code: 'TEMPLATE_ERROR', message: String((err as Error).message).slice(0, 2000) };
    await executeWorkflowCommand(ports.eventStore, ctx, workflowId, { type: 'FailNode', nodeId, attempt: nodeStateOf(state.exec, nodeId)!.attempts, error, executionTime: 0 }).catch(ignoreRefusal);
    return;
  }
  try {
    await continueAsNew(ports.eventStore, ctx, workflowId, nextId, { scope: null, input, by: null });
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== 'WORKFLOW_ALREADY_STARTED') return ignoreRefusal(err);
    const next = await loadWorkflow(ports.eventStore, nextId);
    if (next.state.continuedFrom !== workflowId) throw err;
    await executeWorkflowCommand(ports.eventStore, ctx, workflowId, { type: 'ContinueAsNew', newWorkflowId: nextId, by: null }).catch(ignoreRefusal);
  }
  ports.metrics?.observeNode(workflowMetricKind(state, nodeId), (performance.now() - begin) / 1000, 'completed');
}

/** A refusal (closed meanwhile: canceled, terminated, already continued) leaves nothing to do; anything else is thrown. */
const ignoreRefusal = (err: unknown) => {
  if (!(err instanceof DomainError)) throw err;
};

/** A workflow node's kind label in the metrics (flowsvc_node_duration_seconds, /metrics/performance): `workflow:<kind>`, apart from runs' nodes. */
const workflowMetricKind = (state: WorkflowState, nodeId: string) => `workflow:${nodeKindOf(state, nodeId) ?? 'default'}`;

const WORKFLOW_CANCELED = 'the workflow was canceled';
const sleepUnlessCanceled = abortableSleep(WORKFLOW_CANCELED);

/**
 * Where a workflow's node spans go: the trace of the request that started the workflow (its first
 * event's traceparent, read once per workflow and remembered), linked to what caused this step (a
 * signal, a timer, the previous node) — one trace per workflow however long it lives.
 */
const startTraces = new Map<string, string | null>();
async function traceOf(ports: WorkflowWorkerPorts, workflowId: string, cause: RecordedEvent | undefined): Promise<NodeTrace | undefined> {
  if (!tracingEnabled()) return undefined;
  let start = startTraces.get(workflowId);
  if (start === undefined) {
    const [first] = await ports.eventStore.readStream(`workflow-${workflowId}`, { maxCount: 1 });
    start = first?.metadata.traceparent ?? null;
    if (startTraces.size >= 10_000) startTraces.clear();
    startTraces.set(workflowId, start);
  }
  const causedBy = cause?.metadata.traceparent;
  return { traceparent: start ?? causedBy, links: start && causedBy && causedBy !== start ? linksTo(causedBy) : [], cause };
}
type NodeTrace = { traceparent: string | undefined; links: ReturnType<typeof linksTo>; cause: RecordedEvent | undefined };

/**
 * One regular node, executed like a run's node (same kinds, conditions, timeout), recorded on the
 * workflow. `localWorker`: the node runs locally (runsLocally) and its start is not recorded yet:
 * it is decided with the node's end and appended with it, one append per node instead of two
 * (issue 29). Another worker that ran it too finds it started and records nothing: a local node
 * reaches nothing outside, so running it twice leaves no trace.
 */
function runNode(ports: WorkflowWorkerPorts, state: WorkflowState, nodeId: string, abort: AbortSignal, correlationId: string, trace?: NodeTrace, localWorker?: string) {
  const kind = nodeKindOf(state, nodeId) ?? 'default';
  const attributes = { [ATTR.workflowId]: state.workflowId, [ATTR.flowId]: state.flowId, [ATTR.nodeId]: nodeId, [ATTR.nodeKind]: kind, ...(trace?.cause ? { [ATTR.eventType]: trace.cause.type, [ATTR.eventPosition]: trace.cause.position } : {}) };
  return inSpan(`workflow.node ${kind}`, { attributes, traceparent: trace?.traceparent, links: trace?.links }, () => runWorkflowNode(ports, state, nodeId, abort, correlationId, localWorker));
}

type NodeEnd = Extract<WorkflowCommand, { type: 'CompleteNode' | 'FailNode' }>;

async function runWorkflowNode(ports: WorkflowWorkerPorts, state: WorkflowState, nodeId: string, abort: AbortSignal, correlationId: string, localWorker?: string) {
  const workflowId = state.workflowId;
  const node = graphIndex(state.exec.definition).byId.get(nodeId)!;
  const time = nodeDeadline(abort, ports.settings.NODE_TIMEOUT_MS);
  const signal = time.signal;
  const begin = performance.now();
  const startedAt = ports.clock.now().toISOString();
  const ctx = () => contextOf(ports, state, correlationId, null);
  // The attempt its recorded start gave the node; null while a local node's start is not recorded.
  let attempt: number | null = localWorker === undefined ? nodeStateOf(state.exec, nodeId)!.attempts : null;
  let refused = false;
  /** The node's end; a local node's start goes with it, decided first. */
  const record = async (end: (attempt: number) => Omit<NodeEnd, 'at'>) => {
    if (refused) return;
    if (attempt !== null) {
      await executeWorkflowCommand(ports.eventStore, ctx(), workflowId, end(attempt) as never);
      return;
    }
    const endedAt = ports.clock.now().toISOString();
    await executeWorkflowCommands(ports.eventStore, ctx(), workflowId, [
      () => ({ type: 'StartNode', nodeId, workerId: localWorker!, at: startedAt }),
      (s) => ({ ...end(nodeStateOf(s.exec, nodeId)!.attempts), at: endedAt }) as NodeEnd,
    ]);
  };
  try {
    const execution = (async () => {
      const inputs = nodeInputs(state.exec.definition, state.exec, nodeId);
      const variables = openSecretVariables(inputs.variables, (box) => ports.secrets.open(box));
      const llm = llmCapabilityFor(ports.llm, state.orgId, state.ownerId);
      const context = { ...inputs, variables, processId: `workflow:${workflowId}`, flowId: state.flowId, orgId: state.orgId, userId: state.ownerId, signal, llm, sleep: sleepUnlessCanceled };
      return executeNodeKind(ports, nodeKindsFor(ports), node, context);
    })();
    // A local node still running at the next turn (a delay) records its start then, as a run's does.
    if (attempt === null && !(await settlesThisTurn(execution))) {
      try {
        const started = await executeWorkflowCommand(ports.eventStore, ctx(), workflowId, { type: 'StartNode', nodeId, workerId: localWorker! });
        attempt = nodeStateOf(started.state.exec, nodeId)!.attempts;
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        refused = true; // started by another worker, or the workflow moved on: this run of it leaves no trace
      }
    }
    const { output, metadata, usage, conditionalResults } = await execution;
    const executionTime = Math.round(performance.now() - begin);
    ports.metrics?.observeNode(workflowMetricKind(state, nodeId), executionTime / 1000, 'completed');
    try {
      await record((attempt) => ({ type: 'CompleteNode', nodeId, attempt, output, metadata, conditionalResults, usage, executionTime }));
    } catch (err) {
      if (err instanceof DomainError && err.code === 'OUTPUT_TOO_LARGE') {
        await record((attempt) => ({ type: 'FailNode', nodeId, attempt, error: { code: err.code, message: err.message }, executionTime })).catch(ignoreRefusal);
      } else if (!(err instanceof DomainError)) throw err;
    }
  } catch (err) {
    const error = nodeErrorOf(err, signal, time.timedOut(), WORKFLOW_CANCELED);
    const executionTime = Math.round(performance.now() - begin);
    ports.metrics?.observeNode(workflowMetricKind(state, nodeId), executionTime / 1000, 'failed');
    try {
      await record((attempt) => ({ type: 'FailNode', nodeId, attempt, error, executionTime }));
    } catch (recordErr) {
      if (!(recordErr instanceof DomainError)) throw recordErr; // closed meanwhile (terminated, continued), or started by another worker: nothing to record
    }
  } finally {
    time.clear();
  }
}
