import { z } from 'zod';
import { annotateActiveSpan, ATTR } from '../../lib/tracing.js';
import { flowScopeOf } from '../../commands/flows.js';
import { loadRun, requestStop, startRun as startRunCommand, type RunRequest } from '../../commands/runs.js';
import { loadState } from '../../commands/handle.js';
import { flowDecider, flowNotFound, flowStreamId, idSchema, isVisibleTo, maskFlowEventSecrets, type FlowNode, type FlowState } from '../../domain/flows/index.js';
import { WORKFLOW_ONLY_NODE_TYPES } from '../../domain/flows/node-data.js';
import { overrideConfigSchema, runStreamId, type RunState } from '../../domain/runs/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { spendPeriodOf, spendStreamId } from '../../domain/orgs/spend.js';
import { activeFlowProcesses, latestFlowProcess, listFlowProcesses, listRunningProcesses, processView, runStateView, type ProcessView } from '../../projections/runs.js';
import { ValidationError } from '../errors.js';
import { defineRoute, type RouteInput, type RouteReply } from '../route.js';
import { nodeOf, visibleFlow } from './flows.js';
import { flowParams, nodeParams, readErrors } from './flows-schemas.js';
import { pageQuery } from './pagination.js';

/** Starting runs (here and in the public triggers), their answers, and the processing routes. */

type AnyInput = RouteInput<unknown, unknown, unknown>;

export const runInputs = z.record(z.string(), z.json()).default({});
export const processBody = z.strictObject({
  inputs: runInputs,
  async: z.boolean().default(false),
  saveToHistory: z.boolean().default(false),
  overrideConfig: overrideConfigSchema.strict().nullable().optional(),
});
export const runBody = z.strictObject({
  inputs: runInputs,
  async: z.boolean().default(false),
  saveToHistory: z.boolean().default(false),
  overrideConfig: overrideConfigSchema.strict().nullable().optional(),
});

/** `Idempotency-Key`: 1–200 printable characters. */
export function idempotencyKeyOf(input: Pick<AnyInput, 'koa'>): string | null {
  const key = input.koa.get('idempotency-key');
  if (!key) return null;
  if (key.length > 200 || !/^[\x21-\x7e]+$/.test(key)) throw new ValidationError([{ field: 'headers.idempotency-key', message: 'must be 1-200 visible ASCII characters' }]);
  return key;
}

export interface StartedRunReply {
  processId: string;
  /** The final state for a synchronous run, null for an async one (or a repeated async request). */
  state: RunState | null;
  /** The process of an earlier request with the same Idempotency-Key. */
  repeated: ProcessView | null;
}

/**
 * Starts a run for the request (commands/runs.ts startRun) and answers as soon as the request is
 * durable in the log: no wait for projections, async or sync. Read-your-writes for a run holds
 * by reading the run's own stream (GET /processes/{id} folds it through loadRun), never by
 * waiting for the read model; the lists (a flow's processes, its status, running processes) are
 * eventually consistent (README "Execution semantics").
 */
/** What a run asked for through the API takes from the body and the caller (flow, mode and node come from the path). */
function apiRunOf(input: AnyInput, body: z.infer<typeof runBody>) {
  return {
    inputs: body.inputs,
    async: body.async,
    requestedBy: input.principal!.userId,
    source: 'api' as const,
    saveToHistory: body.saveToHistory,
    overrideConfig: body.overrideConfig ?? null,
    scope: flowScopeOf(input.principal!),
  };
}

export async function startRun(input: AnyInput, request: Omit<RunRequest, 'idempotencyKey' | 'claimBy'>, folded?: FlowState): Promise<StartedRunReply> {
  const { services } = input;
  const userId = input.principal?.userId ?? null;
  const ports = { eventStore: services.eventStore, runs: services.runs, newId: services.newId, settings: services.config };
  const started = await startRunCommand(ports, input.command, request, { userId, idempotencyKey: userId ? idempotencyKeyOf(input) : null }, folded);
  // The request's span names the run it started, and where the run's stream stood when it answered.
  annotateActiveSpan({ [ATTR.runId]: started.processId, [ATTR.flowId]: request.flowId, ...(started.position !== null ? { [ATTR.eventPosition]: started.position } : {}) });
  const finished = started.repeated ?? started.state;
  if (!request.async && finished) await settleFinishedRun(input, started.processId, finished, started.position);
  if (started.repeated) return { processId: started.processId, state: null, repeated: runStateView(started.processId, started.repeated) };
  return { processId: started.processId, state: started.state, repeated: null };
}

/** The position of a stream's newest event (null when it has none). */
async function lastPositionOf(input: AnyInput, streamId: string): Promise<number | null> {
  const [last] = await input.services.eventStore.readStream(streamId, { direction: 'backwards', maxCount: 1 });
  return last?.position ?? null;
}

/**
 * A synchronous answer carries a finished result, so the next read by the same client must find
 * it (issue 38): before answering, the read models reach the run's last event, and the events the
 * run wrote outside its stream (the node history entries in the flow's stream, the organization's
 * spend). Each is waited for on its own stream's newest event, because a projector's position only
 * moves with events of its own categories. Bounded by READ_YOUR_WRITES_TIMEOUT_MS like every other
 * write (X-Read-Model: pending when it ran out); async answers (202) do not wait.
 */
async function settleFinishedRun(input: AnyInput, processId: string, run: RunState, position: number | null): Promise<void> {
  await input.settle(position ?? (await lastPositionOf(input, runStreamId(processId))), runStreamId(processId));
  if (run.saveToHistory) await input.settle(await lastPositionOf(input, flowStreamId(run.flowId)), flowStreamId(run.flowId));
  if (run.orgId && run.usage.cost > 0) {
    const spend = spendStreamId(run.orgId, spendPeriodOf(run.finishedAt ?? input.command.now.toISOString()));
    await input.settle(await lastPositionOf(input, spend), spend);
  }
}

/**
 * The flow a run is started on, from its own stream (through the handler's folded-state cache),
 * not from the read model: starting a run reads nothing but the log, so its answer never waits on
 * the read store (README "Execution semantics"). Routes pass it on to startRun, which then does not
 * fold it again.
 */
export async function runnableFlow(input: AnyInput, flowId: string): Promise<FlowState> {
  const flow = (await loadState(input.services.eventStore, flowStreamId(flowId), flowDecider)).state;
  if (!flow.exists || flow.deleted || !isVisibleTo(flow, flowScopeOf(input.principal!))) throw flowNotFound();
  return flow;
}

export const queued = (processId: string): RouteReply => ({ status: 202, body: { success: true, processId, status: 'queued' } });

/** HTTP status of a process-node answer whose node did not complete: stopped 409, timed out 504, else 500. */
const unfinishedNodeStatus = (status: string) => (status === 'stopped' ? 409 : status === 'timed_out' ? 504 : 500);

/**
 * The seed's process-node answer (200), or 500 with the error body when the node failed (504
 * RUN_TIMED_OUT when the run passed RUN_TIMEOUT_MS: the run's reason, not the aborted node's).
 */
export function nodeReply(view: ProcessView, nodeId: string): RouteReply {
  const node = view.nodes.find((n) => n.nodeId === nodeId);
  if (!node || node.status !== 'completed') {
    const runError = view.error ? { code: view.error.code, message: view.error.reason } : { code: 'RUN_NOT_COMPLETED', message: `the run is ${view.status}` };
    const error = view.status === 'timed_out' ? runError : (node?.error ?? runError);
    const { code, message, ...rest } = error as { code: string; message: string; provider?: string };
    return { status: unfinishedNodeStatus(view.status), body: { success: false, error: { code, message, details: { ...rest, nodeId, processId: view.processId, status: view.status } } } };
  }
  return {
    status: 200,
    body: {
      success: true,
      nodeId,
      result: {
        output: node.output ?? null,
        metadata: node.metadata,
        conditionalResults: node.conditionalResults.map((c) => ({ condition: c.condition, result: c.result, targetNodeId: c.targetNodeId })),
        usage: { total_tokens: node.usage?.total_tokens ?? 0, cost: node.usage?.cost ?? 0 },
      },
      executionTime: node.executionTime ?? 0,
      timestamp: node.finishedAt ?? view.finishedAt ?? new Date().toISOString(),
      processId: view.processId,
    },
  };
}

/** A whole run's answer: every node's state and the run's status (200 whatever the outcome). */
export function runReply(view: ProcessView): RouteReply {
  const started = view.startedAt ? Date.parse(view.startedAt) : NaN;
  const finished = view.finishedAt ? Date.parse(view.finishedAt) : NaN;
  return {
    status: 200,
    body: {
      success: view.status === 'completed',
      ...view,
      executionTime: Number.isFinite(started) && Number.isFinite(finished) ? finished - started : null,
      timestamp: view.finishedAt ?? new Date().toISOString(),
    },
  };
}

/** Answer for a started run in the requested mode. */
/**
 * The node a single-node run would run. A workflow-only kind (wait_signal, sleep, set_state,
 * continue_as_new, query) cannot run alone: refused before a run is started, 400 naming nodeId,
 * instead of a started run that can only fail.
 */
export function runnableNode(flow: { nodes: FlowNode[] }, nodeId: string): FlowNode {
  const node = nodeOf(flow, nodeId);
  const type = node.data.nodeType;
  if ((WORKFLOW_ONLY_NODE_TYPES as readonly unknown[]).includes(type)) {
    throw new DomainError('WORKFLOW_ONLY_NODE', `a ${String(type)} node runs only inside a workflow (POST /api/workflows)`, 'invalid', { field: 'nodeId', nodeId, nodeType: type });
  }
  return node;
}

export function replyFor(started: StartedRunReply, mode: 'node' | 'flow', nodeId: string | null, async: boolean): RouteReply {
  if (async) return queued(started.processId);
  const view = started.repeated ?? runStateView(started.processId, started.state!);
  return mode === 'node' ? nodeReply(view, nodeId!) : runReply(view);
}


const processParams = z.strictObject({ processId: idSchema });
const processNotFound = () => new DomainError('PROCESS_NOT_FOUND', 'process not found', 'not_found');

/**
 * The run from its own stream (through the handler's state cache), or 404 PROCESS_NOT_FOUND when it
 * does not exist or the caller's scope may not see it: another tenant's run is not found.
 */
export async function visibleRun(input: RouteInput<unknown, unknown, unknown>, processId: string): Promise<RunState> {
  const run = await loadRun(input.services.eventStore, processId);
  if (!run.exists || !isVisibleTo(run, flowScopeOf(input.principal!))) throw processNotFound();
  return run;
}
const anyBody = z.looseObject({});
/** A whole run's answer (runReply): the process view with executionTime and timestamp. */
export const runReplySchema = z.looseObject({ success: z.boolean(), processId: z.string(), status: z.string(), nodes: z.array(z.looseObject({ nodeId: z.string(), status: z.string() })) });
/** 202 of an async run: `{success, processId, status: "queued"}`. */
export const queuedReply = z.object({ success: z.literal(true), processId: z.string(), status: z.literal('queued') });
/** The seed's process-node answer (body 2.5), exactly these fields. */
export const processNodeReply = z.strictObject({
  success: z.literal(true),
  nodeId: z.string(),
  result: z.strictObject({
    output: z.unknown().describe("the node's output (text, or a JSON value for structured nodes)"),
    metadata: z.record(z.string(), z.unknown()),
    conditionalResults: z.array(z.strictObject({ condition: z.unknown(), result: z.boolean(), targetNodeId: z.string().nullable() })),
    usage: z.strictObject({ total_tokens: z.number(), cost: z.number() }),
  }),
  executionTime: z.number().describe('milliseconds'),
  timestamp: z.string().describe('ISO 8601'),
  processId: z.string(),
});
const runErrors = {
  ...readErrors,
  400: { description: 'VALIDATION_FAILED (names the field)' },
  402: { description: 'BUDGET_EXCEEDED: the organization has spent its monthly LLM budget and the run would call a paid provider' },
};

/** Processing, Running processes and a run's events (DESIGN.md section 5). */
export const processingRoutes = [
  defineRoute({
    method: 'POST',
    path: '/flows/{flowId}/nodes/{nodeId}/process',
    operationId: 'processNode',
    summary: 'run one node (sync: 200 with the result; async: 202 with processId); Idempotency-Key supported',
    tag: 'Processing',
    auth: 'bearer',
    permission: 'edit_resources',
    params: nodeParams,
    body: processBody,
    responses: {
      200: { description: '{success, nodeId, result: {output, metadata, conditionalResults, usage: {total_tokens, cost}}, executionTime (ms), timestamp, processId}', schema: processNodeReply },
      202: { description: '{success, processId, status: queued}', schema: queuedReply },
      ...runErrors,
      400: { description: 'VALIDATION_FAILED (names the field); WORKFLOW_ONLY_NODE: the node is a workflow kind (wait_signal, sleep, set_state, continue_as_new, query) and runs only inside a workflow' },
      404: { description: 'FLOW_NOT_FOUND or NODE_NOT_FOUND' },
      409: { description: 'RUN_NOT_COMPLETED: the run was stopped before the node completed' },
      500: { description: "the node failed: the provider's error code and message" },
      504: { description: 'RUN_TIMED_OUT: the run passed RUN_TIMEOUT_MS (its node was aborted)' },
    },
    seedStatuses: [200, 401, 404, 500],
    async handler(input) {
      const { params, body } = input;
      const flow = await runnableFlow(input, params.flowId);
      runnableNode(flow, params.nodeId);
      const started = await startRun(input, { ...apiRunOf(input, body), flowId: params.flowId, mode: 'node', nodeId: params.nodeId }, flow);
      return replyFor(started, 'node', params.nodeId, body.async);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/flows/{flowId}/run',
    operationId: 'runFlow',
    summary: 'run the whole flow (sync by default: every node and the status; async: 202 with processId); Idempotency-Key supported',
    tag: 'Processing',
    auth: 'bearer',
    permission: 'edit_resources',
    params: flowParams,
    body: runBody,
    responses: { 200: { description: 'the finished run (status completed, failed, stopped or timed_out)', schema: anyBody }, 202: { description: 'queued', schema: queuedReply }, ...runErrors },
    async handler(input) {
      const { params, body } = input;
      const flow = await runnableFlow(input, params.flowId);
      const started = await startRun(input, { ...apiRunOf(input, body), flowId: params.flowId, mode: 'flow' }, flow);
      return replyFor(started, 'flow', null, body.async);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/flows/{flowId}/stop',
    operationId: 'stopFlow',
    summary: "stop the flow's queued and running processes",
    tag: 'Processing',
    auth: 'bearer',
    permission: 'edit_resources',
    params: flowParams,
    responses: { 200: { description: '{success, stopped: [processId]}', schema: anyBody }, ...readErrors, 409: { description: 'NO_RUNNING_PROCESS' } },
    async handler(input) {
      const { params, services, principal } = input;
      await visibleFlow(input, params.flowId);
      // Runs are answered before they are projected (startRun): let the read model reach the
      // log's head first, so a run this client was just answered for is among the ones stopped.
      await input.settle(await services.eventStore.headPosition(), runStreamId(params.flowId));
      const active = await activeFlowProcesses(services.readStore, params.flowId);
      if (active.length === 0) throw new DomainError('NO_RUNNING_PROCESS', 'the flow has no queued or running process', 'conflict');
      const stopped: string[] = [];
      for (const doc of active) {
        try {
          const result = await requestStop(services.eventStore, input.command, doc._id, principal!.userId);
          await input.settle(result.position, runStreamId(doc._id));
          stopped.push(doc._id);
        } catch (err) {
          if (!(err instanceof DomainError) || err.kind !== 'conflict') throw err; // it finished meanwhile
        }
      }
      return { status: 200, body: { success: true, stopped } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/flows/{flowId}/status',
    operationId: 'flowStatus',
    summary: "the flow's latest run (status idle when it never ran)",
    tag: 'Processing',
    auth: 'bearer',
    permission: 'view_resources',
    params: flowParams,
    responses: { 200: { description: '{success, flowId, status, process}', schema: anyBody }, ...readErrors },
    async handler(input) {
      await visibleFlow(input, input.params.flowId);
      const doc = await latestFlowProcess(input.services.readStore, input.params.flowId);
      const process = doc ? processView(doc) : null;
      return { status: 200, body: { success: true, flowId: input.params.flowId, status: process?.status ?? 'idle', process } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/flows/{flowId}/processes',
    operationId: 'listFlowProcesses',
    summary: 'process history of a flow, newest first (paginated)',
    tag: 'Processing',
    auth: 'bearer',
    permission: 'view_resources',
    params: flowParams,
    query: pageQuery,
    responses: { 200: { description: '{success, items, nextCursor}', schema: anyBody }, ...readErrors },
    async handler(input) {
      await visibleFlow(input, input.params.flowId);
      const page = await listFlowProcesses(input.services.readStore, input.params.flowId, { limit: input.query.limit, cursor: input.query.cursor });
      return { status: 200, body: { success: true, items: page.items.map(processView), nextCursor: page.nextCursor } };
    },
  }),
  // Registered before /processes/{processId}, which would otherwise take "running" for an id.
  defineRoute({
    method: 'GET',
    path: '/processes/running',
    operationId: 'listRunningProcesses',
    summary: "queued and running processes of the user's personal workspace or of the active organization",
    tag: 'Running processes',
    auth: 'bearer',
    permission: 'view_resources',
    query: pageQuery,
    responses: { 200: { description: '{success, items, nextCursor}', schema: anyBody }, 401: { description: 'no or invalid credentials' } },
    async handler(input) {
      const page = await listRunningProcesses(input.services.readStore, flowScopeOf(input.principal!), { limit: input.query.limit, cursor: input.query.cursor });
      return { status: 200, body: { success: true, items: page.items.map(processView), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/processes/{processId}',
    operationId: 'getProcess',
    summary: 'status of one process with per-node states and results',
    tag: 'Processing',
    auth: 'bearer',
    permission: 'view_resources',
    params: processParams,
    responses: { 200: { description: '{success, process}', schema: anyBody }, ...readErrors, 404: { description: 'PROCESS_NOT_FOUND' } },
    async handler(input) {
      // Read-your-writes by the run's own stream, not the read model: runs are answered before
      // they are projected (startRun), so the processes document may be missing or older than
      // what the client was told (a sync run answered completed while its document still says
      // running). Folding the stream through the handler's state cache reads only the events
      // since this process last looked, and is never older than any answer given.
      const run = await visibleRun(input, input.params.processId);
      return { status: 200, body: { success: true, process: runStateView(input.params.processId, run) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/processes/{processId}/events',
    operationId: 'listProcessEvents',
    summary: 'the event history of one run, from the log (paginated by revision)',
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'view_resources',
    params: processParams,
    query: pageQuery,
    responses: { 200: { description: '{success, events, nextCursor}', schema: anyBody }, ...readErrors, 404: { description: 'PROCESS_NOT_FOUND' } },
    async handler(input) {
      const { services, params, query } = input;
      // From the log, not the read model: the events are the truth, and a run just requested is already there.
      await visibleRun(input, params.processId);
      const from = query.cursor && /^\d{1,9}$/.test(query.cursor) ? Number(query.cursor) : 0;
      const events = await services.eventStore.readStream(runStreamId(params.processId), { fromRevision: from, maxCount: query.limit + 1 });
      // RunRequested snapshots the nodes: their secrets show masked, as in every flow read.
      const items = events.slice(0, query.limit).map((e) => ({ type: e.type, revision: e.revision, data: maskFlowEventSecrets(e.type, e.data), actorId: e.metadata.actorId, occurredAt: e.metadata.occurredAt }));
      const nextCursor = events.length > query.limit ? String(events[query.limit].revision) : null;
      return { status: 200, body: { success: true, events: items, nextCursor } };
    },
  }),
];
