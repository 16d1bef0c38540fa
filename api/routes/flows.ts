import { z } from 'zod';
import { flowScopeOf, parseIfMatch, writeUserFlow } from '../../commands/flows.js';
import type { HandleResult } from '../../commands/handle.js';
import {
  connectionShape,
  edgeIdSchema,
  flowDescriptionSchema,
  flowNameSchema,
  flowNotFound,
  flowStreamId,
  nodeIdSchema,
  nodeInputShape,
  nodeNotFound,
  toFlowView,
  type FlowEvent,
  type FlowNode,
  type FlowState,
  type FlowView,
} from '../../domain/flows/index.js';
import { flowViewOf, getFlow, getFlowJson, listFlows, type FlowRecord } from '../../projections/flows.js';
import { ValidationError } from '../errors.js';
import { defineRoute, type RouteInput } from '../route.js';
import { flowParams, flowReply, flowSummaryOut, readErrors, writeErrors } from './flows-schemas.js';
import { pageQuery } from './pagination.js';

/**
 * Flows: list, create, get (ETag), replace, delete, archive, rename. Writes go through the flow
 * aggregate with the caller's scope (another tenant's flow answers 404 from the decider itself),
 * accept If-Match (412 when the flow moved on) and answer the flow as the read model now has it.
 */

type AnyInput = RouteInput<unknown, unknown, unknown>;

export const etagOf = (version: number) => ({ ETag: `"${version}"` });

/** The caller's flow from the read model, or FLOW_NOT_FOUND (missing, deleted and foreign alike). */
export async function visibleFlow(input: AnyInput, flowId: string): Promise<FlowRecord> {
  const flow = await getFlow(input.services.readStore, flowId, flowScopeOf(input.principal!));
  if (!flow) throw flowNotFound();
  return flow;
}

export function nodeOf(flow: { nodes: FlowNode[] }, nodeId: string): FlowNode {
  const node = flow.nodes.find((n) => n.id === nodeId);
  if (!node) throw nodeNotFound(nodeId);
  return node;
}

type FlowWrite = Parameters<typeof writeUserFlow>[3];

/** The client's If-Match as a version; a header that is not one is a 400 naming it. */
export function ifMatchOf(input: Pick<AnyInput, 'koa'>): number | undefined {
  const expected = parseIfMatch(input.koa.get('if-match') || undefined);
  if (Number.isNaN(expected)) throw new ValidationError([{ field: 'headers.if-match', message: 'must be a flow version as the ETag gave it, e.g. "3"' }]);
  return expected;
}

export interface FlowWriteResult {
  result: HandleResult<FlowState, FlowEvent>;
  /** The flow after the write, as a GET will show it (null once deleted). */
  flow: FlowView | null;
}

/**
 * One flow write for a user request (commands/flows.ts writeUserFlow), then read-your-writes, then
 * the flow from the read model. A write that changed nothing still waits for the read model to
 * reach the version it decided on. If the projection is late (X-Read-Model: pending) the answer
 * comes from the aggregate's own state, which the read model will equal.
 */
export async function writeFlow(input: AnyInput, flowId: string, command: FlowWrite): Promise<FlowWriteResult> {
  const { services } = input;
  // A new flow has no version to match: If-Match is only read for existing flows.
  const expectedRevision = command.type === 'CreateFlow' ? undefined : ifMatchOf(input);
  const scope = flowScopeOf(input.principal!);
  const { result, position } = await writeUserFlow(services.eventStore, input.command, flowId, command, { scope, expectedRevision, sealer: services.sealedBox });
  await input.settle(position, flowStreamId(flowId));
  if (result.state.deleted) return { result, flow: null };
  const record = await getFlow(services.readStore, flowId, scope);
  const flow = record && record.version >= result.revision ? flowViewOf(record) : toFlowView(result.state);
  return { result, flow };
}

const tag = 'Flows';
const auth = 'bearer' as const;

const listQuery = pageQuery.extend({
  archived: z.enum(['true', 'false']).optional().describe('true: only archived flows; false: only active ones; absent: both'),
});

const replaceBody = z.strictObject({
  name: flowNameSchema,
  description: flowDescriptionSchema.optional(),
  nodes: z.array(z.strictObject({ id: nodeIdSchema, ...nodeInputShape })),
  edges: z.array(z.strictObject({ id: edgeIdSchema, ...connectionShape })),
});

/** `{success, flow}` with the flow's version as ETag. */
export function flowAnswer({ flow }: FlowWriteResult, status = 200) {
  // Only DeleteFlow leaves no flow, and it has its own answer.
  if (!flow) throw flowNotFound();
  return { status, body: { success: true, flow }, headers: etagOf(flow.version) };
}

export const flowRoutes = [
  defineRoute({
    method: 'GET',
    path: '/flows',
    operationId: 'listFlows',
    summary: "list the caller's flows in the active workspace, most recently updated first (without their graphs)",
    tag,
    auth,
    permission: 'view_resources',
    query: listQuery,
    responses: {
      200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(flowSummaryOut), nextCursor: z.string().nullable() }) },
      400: { description: 'bad limit, cursor or archived' },
      401: readErrors[401],
      403: readErrors[403],
    },
    async handler({ query, principal, services }) {
      const archived = query.archived === undefined ? undefined : query.archived === 'true';
      const page = await listFlows(services.readStore, flowScopeOf(principal!), { archived, limit: query.limit, cursor: query.cursor ?? null });
      return { status: 200, body: { success: true, items: page.items, nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/flows',
    operationId: 'createFlow',
    summary: 'create an empty flow in the active workspace (personal or organization)',
    tag,
    auth,
    permission: 'edit_resources',
    body: z.strictObject({ name: flowNameSchema, description: flowDescriptionSchema.optional() }),
    responses: {
      201: { description: 'created (ETag: its version)', schema: flowReply },
      400: { description: 'VALIDATION_FAILED' },
      401: readErrors[401],
      403: readErrors[403],
    },
    async handler(input) {
      const { principal, services, body } = input;
      const flowId = services.newId();
      const written = await writeFlow(input, flowId, {
        type: 'CreateFlow',
        flowId,
        name: body.name,
        description: body.description,
        ownerId: principal!.userId,
        orgId: principal!.orgId,
        workspaceId: principal!.workspaceId,
      });
      return flowAnswer(written, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/flows/{flowId}',
    operationId: 'getFlow',
    summary: 'get a flow with its nodes and edges (ETag: its version; If-None-Match answers 304)',
    tag,
    auth,
    permission: 'view_resources',
    params: flowParams,
    responses: { 200: { description: 'the flow', schema: flowReply }, 304: { description: 'If-None-Match names the current version' }, ...readErrors },
    async handler(input) {
      // The read model keeps the view as JSON text: a big flow is answered without parsing it.
      const flow = await getFlowJson(input.services.readStore, input.params.flowId, flowScopeOf(input.principal!));
      if (!flow) throw flowNotFound();
      const headers = etagOf(flow.version);
      const ifNoneMatch = input.koa.get('if-none-match');
      if (ifNoneMatch && ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === headers.ETag || t.trim() === '*')) {
        return { status: 304, body: undefined, headers };
      }
      return { status: 200, body: `{"success":true,"flow":${flow.json}}`, headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/flows/{flowId}',
    operationId: 'replaceFlow',
    summary:
      'replace name, description, nodes and edges at once (the whole graph is validated like single edits; triggers and history of nodes that stay are kept) (If-Match optional)',
    tag,
    auth,
    permission: 'edit_resources',
    params: flowParams,
    body: replaceBody,
    responses: {
      200: { description: 'the flow as replaced', schema: flowReply },
      ...writeErrors,
      400: { description: 'VALIDATION_FAILED, LIMIT_EXCEEDED, or a structural refusal (DANGLING_EDGE, SELF_LOOP, DUPLICATE_EDGE, CYCLE)' },
      413: { description: 'LIMIT_EXCEEDED: the graph is too large for one write' },
    },
    async handler(input) {
      const { name, description, nodes, edges } = input.body;
      return flowAnswer(await writeFlow(input, input.params.flowId, { type: 'ReplaceFlow', name, description, nodes, edges }));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/flows/{flowId}',
    operationId: 'deleteFlow',
    summary: 'delete a flow (its event stream stays as the audit trail; the id is never reused) (If-Match optional)',
    tag,
    auth,
    permission: 'edit_resources',
    params: flowParams,
    responses: { 200: { description: 'deleted', schema: z.object({ success: z.literal(true), id: z.string(), message: z.string() }) }, ...writeErrors },
    async handler(input) {
      await writeFlow(input, input.params.flowId, { type: 'DeleteFlow' });
      return { status: 200, body: { success: true, id: input.params.flowId, message: 'flow deleted' } };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/flows/{flowId}/archive',
    operationId: 'archiveFlow',
    summary: 'archive or unarchive a flow (a list filter, not a lock; repeating it changes nothing) (If-Match optional)',
    tag,
    auth,
    permission: 'edit_resources',
    params: flowParams,
    body: z.strictObject({ archived: z.boolean() }),
    responses: { 200: { description: 'the flow', schema: flowReply }, ...writeErrors },
    async handler(input) {
      return flowAnswer(await writeFlow(input, input.params.flowId, { type: input.body.archived ? 'ArchiveFlow' : 'UnarchiveFlow' }));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/flows/{flowId}/name',
    operationId: 'renameFlow',
    summary: 'rename a flow (If-Match optional)',
    tag,
    auth,
    permission: 'edit_resources',
    params: flowParams,
    body: z.strictObject({ name: flowNameSchema }),
    responses: { 200: { description: 'the flow', schema: flowReply }, ...writeErrors },
    async handler(input) {
      return flowAnswer(await writeFlow(input, input.params.flowId, { type: 'RenameFlow', name: input.body.name }));
    },
  }),
];

