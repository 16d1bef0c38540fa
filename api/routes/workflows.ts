import { z } from 'zod';
import { annotateActiveSpan, ATTR } from '../../lib/tracing.js';
import { flowScopeOf } from '../../commands/flows.js';
import { continueAsNew, createWorkflow, executeWorkflowCommand, requireWorkflow } from '../../commands/workflows.js';
import { idSchema } from '../../domain/flows/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import {
  answerQuery,
  declaredQueries,
  IDEMPOTENCY_POLICIES,

  timerView,
  workflowSearchFilter,
  workflowStreamId,
  workflowView,
  WORKFLOW_STATUSES,
  MAX_QUERY_LENGTH,
  type WorkflowState,
} from '../../domain/workflows/index.js';
import { pageWorkflows, workflowStateOf, type WorkflowDoc } from '../../projections/workflows.js';
import { defineRoute, type RouteInput } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';

/** Workflows, Queries, Signals and Timers (issue 13): durable executions of a flow, stream `workflow-<id>`. */
type AnyInput = RouteInput<unknown, unknown, unknown>;

const anyBody = z.looseObject({});
const MAX_SEARCH_ATTRIBUTES = 32;
const attributeName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be an identifier of at most 64 characters (letters, digits, _)');
const reasonSchema = z.string().max(2000).optional();
const nameSchema = z.string().min(1).max(200);

const createBody = z.strictObject({
  flowId: idSchema,
  workflowId: idSchema.optional(),
  input: z.json().optional(),
  start: z.boolean().default(true),
  idempotencyPolicy: z.enum(IDEMPOTENCY_POLICIES).default('allow_duplicate'),
  searchAttributes: z
    .record(attributeName, z.union([z.string().max(1000), z.number().refine(Number.isFinite, 'must be finite'), z.boolean()]))
    .refine((r) => Object.keys(r).length <= MAX_SEARCH_ATTRIBUTES, `at most ${MAX_SEARCH_ATTRIBUTES} search attributes`)
    .default({}),
  memo: z.record(z.string(), z.json()).default({}),
  /** Milliseconds from the start after which the workflow ends TIMED_OUT. */
  executionTimeoutMs: z.number().int().positive().max(366 * 24 * 3600 * 1000).optional(),
});
const workflowParams = z.strictObject({ workflowId: idSchema });
const timerParams = z.strictObject({ workflowId: idSchema, timerId: z.string().min(1).max(300) });
const listQuery = pageQuery.extend({ status: z.enum(WORKFLOW_STATUSES).optional(), flowId: idSchema.optional() });
const searchQuery = pageQuery.extend({ query: z.string().min(1).max(MAX_QUERY_LENGTH) });
const historyQuery = z.strictObject({
  afterEventId: z.coerce.number().int().min(-1).default(-1),
  wait: z.enum(['true', 'false']).default('false'),
  /** How long a `wait=true` poll may wait, milliseconds (at most 30 s). */
  waitMs: z.coerce.number().int().min(1).max(30_000).default(30_000),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
const signalBody = z.strictObject({ name: nameSchema, payload: z.json().optional(), requestId: z.string().min(1).max(200).optional() });
const cancelBody = z.strictObject({ reason: reasonSchema, terminate: z.boolean().default(false) }).default({ terminate: false });
const reasonBody = z.strictObject({ reason: reasonSchema }).default({});
const queryBody = z.strictObject({ name: nameSchema });
const timerBody = z
  .strictObject({
    name: nameSchema,
    fireAt: z.iso.datetime({ offset: true }).optional(),
    delayMs: z.number().int().min(0).max(366 * 24 * 3600 * 1000).optional(),
    signal: z.strictObject({ name: nameSchema, payload: z.json().optional() }).optional(),
  })
  .refine((b) => (b.fireAt === undefined) !== (b.delayMs === undefined), { message: 'give exactly one of fireAt and delayMs', path: ['fireAt'] });
const continueBody = z.strictObject({ workflowId: idSchema.optional(), input: z.json().optional() }).default({});

const errors = {
  400: { description: 'VALIDATION_FAILED (names the field)' },
  401: { description: 'UNAUTHENTICATED' },
  404: { description: "WORKFLOW_NOT_FOUND (also another tenant's workflow)" },
};
const workflowReply = { description: '{success, workflow: {id, flowId, status, input, result?, error?, state, pendingSignals, waitingOn?, timers, searchAttributes, memo, historyLength, historyWarning?, createdAt, startedAt, closedAt, version, …}}', schema: anyBody };

async function visibleWorkflow(input: AnyInput, workflowId: string): Promise<WorkflowState> {
  return requireWorkflow(input.services.eventStore, workflowId, flowScopeOf(input.principal!));
}

const by = (input: AnyInput) => input.principal?.userId ?? null;
const listItem = (doc: WorkflowDoc) => workflowView(workflowStateOf(doc));

export const workflowRoutes = [
  defineRoute({
    method: 'POST',
    path: '/workflows',
    operationId: 'createWorkflow',
    summary: 'create a workflow of a flow and (unless start: false) start it; workflowId reuse follows idempotencyPolicy',
    tag: 'Workflows',
    auth: 'bearer',
    permission: 'edit_resources',
    body: createBody,
    responses: { 201: workflowReply, ...errors, 404: { description: 'FLOW_NOT_FOUND' }, 409: { description: 'WORKFLOW_ALREADY_STARTED' } },
    async handler(input) {
      const { body, services } = input;
      const workflowId = body.workflowId ?? `wf_${services.newId()}`;
      const result = await createWorkflow(services.eventStore, input.command, {
        workflowId,
        flowId: body.flowId,
        input: body.input ?? null,
        start: body.start,
        idempotencyPolicy: body.idempotencyPolicy,
        searchAttributes: body.searchAttributes,
        memo: body.memo,
        executionTimeoutMs: body.executionTimeoutMs ?? null,
        createdBy: by(input),
        scope: flowScopeOf(input.principal!),
      });
      annotateActiveSpan({ [ATTR.workflowId]: workflowId, ...(result.position !== null ? { [ATTR.eventPosition]: result.position } : {}) });
      await input.settle(result.position, workflowStreamId(workflowId));
      return { status: 201, body: { success: true, workflow: workflowView(result.state) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/workflows',
    operationId: 'listWorkflows',
    summary: 'workflows of the tenant, newest first (a projection), filtered by status and flowId; paginated',
    tag: 'Workflows',
    auth: 'bearer',
    permission: 'view_resources',
    query: listQuery,
    responses: { 200: { description: '{success, items: [workflow], nextCursor}', schema: anyBody }, ...errors },
    async handler(input) {
      const { query, services } = input;
      const filter = { ...(query.status && { status: query.status }), ...(query.flowId && { flowId: query.flowId }) };
      const page = await pageWorkflows(services.readStore, flowScopeOf(input.principal!), filter, { limit: query.limit, cursor: query.cursor ?? null });
      return pageReply(page, listItem);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/workflows/search',
    operationId: 'searchWorkflows',
    summary: 'search workflows with the filter language (WorkflowId, FlowId, ExecutionStatus, StartTime, CloseTime, CreateTime, search attributes; = != > >= < <= AND OR NOT () IN BETWEEN STARTS_WITH)',
    tag: 'Workflows',
    auth: 'bearer',
    permission: 'view_resources',
    query: searchQuery,
    responses: { 200: { description: '{success, items: [workflow], nextCursor}', schema: anyBody }, ...errors, 400: { description: 'INVALID_QUERY with details.position, or VALIDATION_FAILED' } },
    async handler(input) {
      const { query, services } = input;
      const filter = workflowSearchFilter(query.query);
      const page = await pageWorkflows(services.readStore, flowScopeOf(input.principal!), filter, { limit: query.limit, cursor: query.cursor ?? null });
      return pageReply(page, listItem);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/workflows/{workflowId}',
    operationId: 'getWorkflow',
    summary: 'a workflow, folded from its log (never stale)',
    tag: 'Workflows',
    auth: 'bearer',
    permission: 'view_resources',
    params: workflowParams,
    responses: { 200: workflowReply, ...errors },
    async handler(input) {
      const state = await visibleWorkflow(input, input.params.workflowId);
      return { status: 200, body: { success: true, workflow: workflowView(state) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workflows/{workflowId}/query',
    operationId: 'queryWorkflow',
    summary: "answer a query from the log (no worker needed; works paused and closed): state, status, pendingSignals, a query node's queryName (its result template rendered over the state) or a key of the state",
    tag: 'Queries',
    auth: 'bearer',
    permission: 'view_resources',
    params: workflowParams,
    body: queryBody,
    responses: { 200: { description: '{success, name, result}', schema: anyBody }, ...errors, 404: { description: 'WORKFLOW_NOT_FOUND, or QUERY_NOT_FOUND (no such key in the state)' } },
    async handler(input) {
      const state = await visibleWorkflow(input, input.params.workflowId);
      const answer = answerQuery(state, input.body.name);
      if (!answer.found) {
        const queries = declaredQueries(state).map((n) => n.data.queryName as string);
        throw new DomainError('QUERY_NOT_FOUND', `no query ${input.body.name}: use state, status, pendingSignals, a query node's queryName or a key of the state`, 'not_found', { name: input.body.name, queries, keys: Object.keys(state.state) });
      }
      return { status: 200, body: { success: true, name: input.body.name, result: answer.result, status: state.status } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/workflows/{workflowId}/history',
    operationId: 'workflowHistory',
    summary: "the workflow's events in order after afterEventId; wait=true long-polls (≤ 30 s) until a newer event exists",
    tag: 'Queries',
    auth: 'bearer',
    permission: 'view_resources',
    params: workflowParams,
    query: historyQuery,
    responses: { 200: { description: '{success, events: [{eventId, type, data, occurredAt, actorId}], lastEventId, hasMore}', schema: anyBody }, ...errors },
    async handler(input) {
      const { params, query, services } = input;
      await visibleWorkflow(input, params.workflowId);
      const streamId = workflowStreamId(params.workflowId);
      const read = () => services.eventStore.readStream(streamId, { fromRevision: query.afterEventId + 1 });
      let events = await read();
      if (events.length === 0 && query.wait === 'true') {
        const watch = services.streamSignals.watch(streamId);
        const deadline = Date.now() + query.waitMs;
        try {
          while (events.length === 0 && Date.now() < deadline) {
            await watch.next(Math.min(1000, deadline - Date.now()));
            events = await read();
          }
        } finally {
          watch.close();
        }
      }
      const page = events.slice(0, query.limit);
      const last = page.length > 0 ? page[page.length - 1].revision : query.afterEventId;
      return {
        status: 200,
        body: {
          success: true,
          events: page.map((e) => ({ eventId: e.revision, type: e.type, data: e.data, occurredAt: e.metadata.occurredAt, actorId: e.metadata.actorId })),
          lastEventId: last,
          hasMore: events.length > page.length,
        },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workflows/{workflowId}/signal',
    operationId: 'signalWorkflow',
    summary: 'record a signal (durable before the answer; a repeated requestId is recorded once); name __start starts a CREATED workflow',
    tag: 'Signals',
    auth: 'bearer',
    permission: 'edit_resources',
    params: workflowParams,
    body: signalBody,
    responses: { 202: { description: '{success, signalId, recorded: false when the requestId was seen before, status}', schema: anyBody }, ...errors, 409: { description: 'WORKFLOW_CLOSED' } },
    async handler(input) {
      const { params, body, services } = input;
      const signalId = services.newId();
      const result = await executeWorkflowCommand(
        services.eventStore,
        input.command,
        params.workflowId,
        { type: 'SignalWorkflow', signalId, name: body.name, payload: body.payload ?? null, requestId: body.requestId ?? null, by: by(input) },
        flowScopeOf(input.principal!),
      );
      annotateActiveSpan({ [ATTR.workflowId]: params.workflowId, ...(result.position !== null ? { [ATTR.eventPosition]: result.position } : {}) });
      await input.settle(result.position, workflowStreamId(params.workflowId));
      const recorded = result.events.some((e) => e.type === 'SignalReceived' || e.type === 'WorkflowStarted');
      const existing = body.requestId ? (result.state.requestIds[body.requestId] ?? null) : null;
      return { status: 202, body: { success: true, signalId: recorded ? signalId : existing, recorded, status: result.state.status } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workflows/{workflowId}/cancel',
    operationId: 'cancelWorkflow',
    summary: 'cancel cooperatively (in-flight nodes aborted, timers canceled, ends CANCELED); terminate: true ends it at once (TERMINATED)',
    tag: 'Signals',
    auth: 'bearer',
    permission: 'edit_resources',
    params: workflowParams,
    body: cancelBody,
    responses: { 202: workflowReply, ...errors, 409: { description: 'WORKFLOW_CLOSED' } },
    async handler(input) {
      const { params, body, services } = input;
      const result = await executeWorkflowCommand(services.eventStore, input.command, params.workflowId, { type: 'CancelWorkflow', by: by(input), reason: body.reason ?? null, terminate: body.terminate }, flowScopeOf(input.principal!));
      await input.settle(result.position, workflowStreamId(params.workflowId));
      return { status: 202, body: { success: true, workflow: workflowView(result.state) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workflows/{workflowId}/pause',
    operationId: 'pauseWorkflow',
    summary: 'pause: no node starts until resume (a node in flight finishes and is recorded; due timers fire on resume)',
    tag: 'Signals',
    auth: 'bearer',
    permission: 'edit_resources',
    params: workflowParams,
    body: reasonBody,
    responses: { 200: workflowReply, ...errors, 409: { description: 'WORKFLOW_NOT_RUNNING or WORKFLOW_CLOSED' } },
    async handler(input) {
      const { params, body, services } = input;
      const result = await executeWorkflowCommand(services.eventStore, input.command, params.workflowId, { type: 'PauseWorkflow', by: by(input), reason: body.reason ?? null }, flowScopeOf(input.principal!));
      await input.settle(result.position, workflowStreamId(params.workflowId));
      return { status: 200, body: { success: true, workflow: workflowView(result.state) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workflows/{workflowId}/resume',
    operationId: 'resumeWorkflow',
    summary: 'resume a PAUSED workflow (timers that came due fire now), or start a CREATED one',
    tag: 'Signals',
    auth: 'bearer',
    permission: 'edit_resources',
    params: workflowParams,
    body: reasonBody,
    responses: { 200: workflowReply, ...errors, 409: { description: 'WORKFLOW_NOT_PAUSED or WORKFLOW_CLOSED' } },
    async handler(input) {
      const { params, body, services } = input;
      const result = await executeWorkflowCommand(services.eventStore, input.command, params.workflowId, { type: 'ResumeWorkflow', by: by(input), reason: body.reason ?? null }, flowScopeOf(input.principal!));
      await input.settle(result.position, workflowStreamId(params.workflowId));
      return { status: 200, body: { success: true, workflow: workflowView(result.state) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workflows/{workflowId}/continue-as-new',
    operationId: 'continueWorkflowAsNew',
    summary: 'close this execution and start a fresh one carrying its state (linked both ways: continuedAs / continuedFrom)',
    tag: 'Workflows',
    auth: 'bearer',
    permission: 'edit_resources',
    params: workflowParams,
    body: continueBody,
    responses: { 201: { description: '{success, workflow (the new one), previous (the closed one)}', schema: anyBody }, ...errors, 409: { description: 'WORKFLOW_CLOSED or WORKFLOW_ALREADY_STARTED' } },
    async handler(input) {
      const { params, body, services } = input;
      const newId = body.workflowId ?? `wf_${services.newId()}`;
      const result = await continueAsNew(services.eventStore, input.command, params.workflowId, newId, { scope: flowScopeOf(input.principal!), by: by(input), ...(body.input !== undefined && { input: body.input }) });
      await input.settle(result.created.position, workflowStreamId(newId));
      await input.settle(result.old.position, workflowStreamId(params.workflowId));
      return { status: 201, body: { success: true, workflow: workflowView(result.created.state), previous: workflowView(result.old.state) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workflows/{workflowId}/timers',
    operationId: 'createWorkflowTimer',
    summary: 'schedule a durable timer (fireAt or delayMs); when it fires it records TimerFired and delivers the optional signal',
    tag: 'Timers',
    auth: 'bearer',
    permission: 'edit_resources',
    params: workflowParams,
    body: timerBody,
    responses: { 201: { description: '{success, timer}', schema: anyBody }, ...errors, 409: { description: 'WORKFLOW_CLOSED' } },
    async handler(input) {
      const { params, body, services } = input;
      const timerId = `tmr_${services.newId()}`;
      const fireAt = body.fireAt ? new Date(body.fireAt).toISOString() : new Date(input.command.now.getTime() + body.delayMs!).toISOString();
      const signal = body.signal ? { name: body.signal.name, payload: body.signal.payload ?? null } : null;
      const result = await executeWorkflowCommand(services.eventStore, input.command, params.workflowId, { type: 'ScheduleTimer', timerId, name: body.name, fireAt, signal }, flowScopeOf(input.principal!));
      await input.settle(result.position, workflowStreamId(params.workflowId));
      return { status: 201, body: { success: true, timer: timerView(result.state.timers[timerId]) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/workflows/{workflowId}/timers',
    operationId: 'listWorkflowTimers',
    summary: "the workflow's timers, pending and fired (and canceled), by fireAt",
    tag: 'Timers',
    auth: 'bearer',
    permission: 'view_resources',
    params: workflowParams,
    responses: { 200: { description: '{success, timers: [{timerId, name, kind, fireAt, status, signal, firedAt, canceledAt}]}', schema: anyBody }, ...errors },
    async handler(input) {
      const state = await visibleWorkflow(input, input.params.workflowId);
      const timers = Object.values(state.timers).map(timerView).sort((a, b) => a.fireAt.localeCompare(b.fireAt));
      return { status: 200, body: { success: true, timers } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/workflows/{workflowId}/timers/{timerId}',
    operationId: 'cancelWorkflowTimer',
    summary: 'cancel a pending timer (409 TIMER_ALREADY_FIRED when it fired)',
    tag: 'Timers',
    auth: 'bearer',
    permission: 'edit_resources',
    params: timerParams,
    responses: { 200: { description: '{success, timer}', schema: anyBody }, ...errors, 404: { description: 'WORKFLOW_NOT_FOUND or WORKFLOW_TIMER_NOT_FOUND' }, 409: { description: 'TIMER_ALREADY_FIRED or TIMER_NOT_CANCELABLE' } },
    async handler(input) {
      const { params, services } = input;
      const result = await executeWorkflowCommand(services.eventStore, input.command, params.workflowId, { type: 'CancelTimer', timerId: params.timerId }, flowScopeOf(input.principal!));
      await input.settle(result.position, workflowStreamId(params.workflowId));
      return { status: 200, body: { success: true, timer: timerView(result.state.timers[params.timerId]) } };
    },
  }),
];


