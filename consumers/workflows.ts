import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../commands/handle.js';
import { executeWorkflowCommand, loadWorkflow } from '../commands/workflows.js';
import { openSecretVariables } from '../domain/flows/secrets.js';
import { graphIndex, nextSteps, nodeInputs, nodeStateOf } from '../domain/runs/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { isWorkflowKind, type WorkflowState } from '../domain/workflows/index.js';
import type { Consumer } from '../ports/bus.js';
import type { WorkflowTimers } from '../ports/workflows.js';
import { abortableSleep, executeNodeKind, LOCAL_WORKER_ID, nodeDeadline, nodeErrorOf, type RunEnginePorts } from './runs-executor.js';
import { nodeKindsFor } from './runs-kinds/index.js';
import { llmCapabilityFor } from './runs-llm.js';

export interface WorkflowWorkerPorts extends RunEnginePorts {
  timers: WorkflowTimers;
}

/**
 * Drives workflows (stream `workflow-<id>`). After each of a workflow's events it asks the
 * scheduler (domain/runs/scheduler.ts, over the workflow's node state) which regular nodes are
 * ready, starts them on the stream (StartNode, fenced by this worker's id) and executes them with
 * the run engine's node kinds, recording CompleteNode / FailNode. wait_signal, sleep and set_state
 * are decided by the aggregate itself and never reach here. Cancel, terminate and the other ends
 * abort in-flight calls of that workflow the way a run stop does: one AbortController per workflow,
 * aborted by the event. TimerScheduled is handed to the timers (held if due soon).
 */
const inFlight = new Map<string, { controller: AbortController; nodes: Set<string> }>();

export const isDrivingWorkflow = (workflowId: string) => inFlight.has(workflowId);
export function abortWorkflowNodes(workflowId: string, reason: string) {
  inFlight.get(workflowId)?.controller.abort(new Error(reason));
}

const ENDING = new Set(['WorkflowCanceled', 'WorkflowTerminated', 'WorkflowTimedOut', 'WorkflowFailed', 'WorkflowContinuedAsNew', 'WorkflowCancelRequested']);

export function workflowWorker(ports: WorkflowWorkerPorts, workerName: string): Consumer {
  const workerId = `${workerName}@${LOCAL_WORKER_ID}`;
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
      if (ENDING.has(event.type)) abortWorkflowNodes(workflowId, event.type === 'WorkflowCancelRequested' ? 'the workflow is being canceled' : `the workflow ended (${event.type})`);
      await drive(ports, workflowId, workerId, event);
    },
  };
}

function contextOf(ports: WorkflowWorkerPorts, s: WorkflowState, correlationId: string, causationId: string | null): CommandContext {
  return { actorId: null, orgId: s.orgId, workspaceId: s.workspaceId, correlationId, causationId, requestId: null, now: ports.clock.now() };
}

/** Starts the regular nodes that are ready now; each runs in the background. */
export async function drive(ports: WorkflowWorkerPorts, workflowId: string, workerId: string, cause?: RecordedEvent) {
  const { state } = await loadWorkflow(ports.eventStore, workflowId);
  if (!state.exists || state.status !== 'RUNNING' || state.cancelRequested) return;
  const ready = nextSteps(state.exec.definition, state.exec).ready.filter((id) => !isWorkflowKind(typeof graphIndex(state.exec.definition).byId.get(id)?.data.nodeType === 'string' ? (graphIndex(state.exec.definition).byId.get(id)!.data.nodeType as string) : null));
  if (ready.length === 0) return;
  let slot = inFlight.get(workflowId);
  const correlationId = cause?.metadata.correlationId ?? randomUUID();
  for (const nodeId of ready) {
    if (slot?.nodes.has(nodeId)) continue;
    if ((slot?.nodes.size ?? 0) >= ports.settings.RUN_CONCURRENCY) break;
    let started;
    try {
      started = await executeWorkflowCommand(ports.eventStore, contextOf(ports, state, correlationId, cause?.id ?? null), workflowId, { type: 'StartNode', nodeId, workerId });
    } catch (err) {
      if (err instanceof DomainError) continue; // another worker started it, or the workflow moved on
      throw err;
    }
    if (!slot) inFlight.set(workflowId, (slot = { controller: new AbortController(), nodes: new Set() }));
    const current = slot;
    current.nodes.add(nodeId);
    void runNode(ports, started.state, nodeId, current.controller.signal, correlationId)
      .catch((err) => ports.logger.error({ workflowId, nodeId, err: (err as Error).message }, 'workflow node failed to record'))
      .finally(() => {
        current.nodes.delete(nodeId);
        if (current.nodes.size === 0 && inFlight.get(workflowId) === current) inFlight.delete(workflowId);
      });
  }
}

const WORKFLOW_CANCELED = 'the workflow was canceled';
const sleepUnlessCanceled = abortableSleep(WORKFLOW_CANCELED);

/** One regular node, executed like a run's node (same kinds, conditions, timeout), recorded on the workflow. */
async function runNode(ports: WorkflowWorkerPorts, state: WorkflowState, nodeId: string, abort: AbortSignal, correlationId: string) {
  const workflowId = state.workflowId;
  const attempt = nodeStateOf(state.exec, nodeId)!.attempts;
  const node = graphIndex(state.exec.definition).byId.get(nodeId)!;
  const time = nodeDeadline(abort, ports.settings.NODE_TIMEOUT_MS);
  const signal = time.signal;
  const begin = performance.now();
  const ctx = () => contextOf(ports, state, correlationId, null);
  try {
    const inputs = nodeInputs(state.exec.definition, state.exec, nodeId);
    const variables = openSecretVariables(inputs.variables, (box) => ports.secrets.open(box));
    const llm = llmCapabilityFor(ports.llm, state.orgId, state.ownerId);
    const context = { ...inputs, variables, processId: `workflow:${workflowId}`, flowId: state.flowId, orgId: state.orgId, userId: state.ownerId, signal, llm, sleep: sleepUnlessCanceled };
    const { output, metadata, usage, conditionalResults } = await executeNodeKind(ports, nodeKindsFor(ports), node, context);
    const executionTime = Math.round(performance.now() - begin);
    try {
      await executeWorkflowCommand(ports.eventStore, ctx(), workflowId, { type: 'CompleteNode', nodeId, attempt, output, metadata, conditionalResults, usage, executionTime });
    } catch (err) {
      if (err instanceof DomainError && err.code === 'OUTPUT_TOO_LARGE') {
        await executeWorkflowCommand(ports.eventStore, ctx(), workflowId, { type: 'FailNode', nodeId, attempt, error: { code: err.code, message: err.message }, executionTime });
      } else if (!(err instanceof DomainError)) throw err;
    }
  } catch (err) {
    const error = nodeErrorOf(err, signal, time.timedOut(), WORKFLOW_CANCELED);
    const executionTime = Math.round(performance.now() - begin);
    try {
      await executeWorkflowCommand(ports.eventStore, ctx(), workflowId, { type: 'FailNode', nodeId, attempt, error, executionTime });
    } catch (recordErr) {
      if (!(recordErr instanceof DomainError)) throw recordErr; // closed meanwhile (terminated, continued): nothing to record
    }
  } finally {
    time.clear();
  }
}
