import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { loadRun, requestStop } from '../../commands/runs.js';
import { idSchema, isVisibleTo } from '../../domain/flows/index.js';
import { runStreamId } from '../../domain/runs/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { activeFlowProcesses, getProcess, latestFlowProcess, listFlowProcesses, listRunningProcesses, processView } from '../../projections/runs.js';
import { defineRoute } from '../route.js';
import { flowParams, nodeOf, nodeParams, readErrors, visibleFlow } from './flows-support.js';
import { pageQuery } from './pagination.js';
import { processBody, replyFor, runBody, startRun } from './runs-support.js';

const processParams = z.strictObject({ processId: idSchema });
const processNotFound = () => new DomainError('PROCESS_NOT_FOUND', 'process not found', 'not_found');
const anyBody = z.looseObject({});
const runErrors = { ...readErrors, 400: { description: 'VALIDATION_FAILED (names the field)' } };

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
      200: { description: '{success, nodeId, result: {output, metadata, conditionalResults, usage: {total_tokens, cost}}, executionTime (ms), timestamp, processId}', schema: anyBody },
      202: { description: '{success, processId, status: queued}' },
      ...runErrors,
      404: { description: 'FLOW_NOT_FOUND or NODE_NOT_FOUND' },
      500: { description: "the node failed: the provider's error code and message" },
    },
    async handler(input) {
      const { params, body, principal } = input;
      const flow = await visibleFlow(input, params.flowId);
      nodeOf(flow, params.nodeId);
      const started = await startRun(input, {
        flowId: params.flowId,
        mode: 'node',
        nodeId: params.nodeId,
        inputs: body.inputs,
        async: body.async,
        requestedBy: principal!.userId,
        source: 'api',
        saveToHistory: body.saveToHistory,
        overrideConfig: body.overrideConfig ?? null,
        scope: flowScopeOf(principal!),
      });
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
    responses: { 200: { description: 'the finished run', schema: anyBody }, 202: { description: 'queued' }, ...runErrors },
    async handler(input) {
      const { params, body, principal } = input;
      await visibleFlow(input, params.flowId);
      const started = await startRun(input, {
        flowId: params.flowId,
        mode: 'flow',
        inputs: body.inputs,
        async: body.async,
        requestedBy: principal!.userId,
        source: 'api',
        saveToHistory: body.saveToHistory,
        overrideConfig: body.overrideConfig ?? null,
        scope: flowScopeOf(principal!),
      });
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
      const doc = await getProcess(input.services.readStore, input.params.processId, flowScopeOf(input.principal!));
      if (!doc) throw processNotFound();
      return { status: 200, body: { success: true, process: processView(doc) } };
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
      const run = await loadRun(services.eventStore, params.processId);
      if (!run.exists || !isVisibleTo(run, flowScopeOf(input.principal!))) throw processNotFound();
      const from = query.cursor && /^\d{1,9}$/.test(query.cursor) ? Number(query.cursor) : 0;
      const events = await services.eventStore.readStream(runStreamId(params.processId), { fromRevision: from, maxCount: query.limit + 1 });
      const items = events.slice(0, query.limit).map((e) => ({ type: e.type, revision: e.revision, data: e.data, actorId: e.metadata.actorId, occurredAt: e.metadata.occurredAt }));
      const nextCursor = events.length > query.limit ? String(events[query.limit].revision) : null;
      return { status: 200, body: { success: true, events: items, nextCursor } };
    },
  }),
];
