import { z } from 'zod';
import { MAX_EDGES_PER_FLOW, connectionShape, findEdge, idSchema, validateGraph, type FlowEdge } from '../../domain/flows/index.js';
import { InvalidCursorError } from '../../ports/read-store.js';
import { defineRoute } from '../route.js';
import { etagOf, visibleFlow, writeFlow } from './flows.js';
import { edgeOut, flowParams } from './flows-schemas.js';
import { MAX_PAGE_SIZE } from './pagination.js';

/**
 * Connections (edges) of a flow. Every write goes through the flow aggregate, which refuses
 * structural problems (DANGLING_EDGE, SELF_LOOP, DUPLICATE_EDGE, CYCLE, 400) with their code;
 * `validate` reports every problem instead, including the two a stored flow may have
 * (UNREACHABLE_NODE, CONDITION_TARGET_WITHOUT_EDGE). Writes take `If-Match` and answer the new
 * version as ETag.
 */

const connectionParams = z.strictObject({ flowId: idSchema, connectionId: idSchema });
const edgeSchema = edgeOut;
const problemSchema = z.object({
  code: z.string(),
  message: z.string(),
  nodeIds: z.array(z.string()).optional(),
  edgeId: z.string().optional(),
  duplicateOf: z.string().optional(),
  conditionIndex: z.number().optional(),
});

const connectionBody = z.strictObject(connectionShape);
const updateBody = z
  .strictObject(connectionShape)
  .partial()
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change');
/** A proposed connection to check along with the stored ones; without an id it gets `proposed-<index>`. */
const proposedConnection = z.strictObject({ id: idSchema.optional(), ...connectionShape });
const validateBody = z.strictObject({ connections: z.array(proposedConnection).max(MAX_EDGES_PER_FLOW).optional() });
const batchBody = z.strictObject({ connections: z.array(connectionBody).min(1).max(MAX_EDGES_PER_FLOW) });
const batchDeleteBody = z.strictObject({ connectionIds: z.array(idSchema).min(1).max(MAX_EDGES_PER_FLOW) });

/**
 * Offset pagination over the flow's edges (insertion order); the cursor remembers the last id
 * seen too, so a page boundary survives removals before it. Base64url JSON, opaque to clients.
 */
const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(20),
  cursor: z.string().max(512).optional(),
});
const encodeCursor = (index: number, id: string) => Buffer.from(JSON.stringify({ i: index, id })).toString('base64url');
function startAfterCursor(edges: FlowEdge[], cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const { i, id } = (parsed ?? {}) as { i?: unknown; id?: unknown };
  if (!Number.isInteger(i) || (i as number) < 0 || typeof id !== 'string') throw new InvalidCursorError();
  const at = edges.findIndex((e) => e.id === id);
  return at >= 0 ? at + 1 : Math.min((i as number) + 1, edges.length);
}

const common = { tag: 'Connections', auth: 'bearer' as const };
const errors = {
  401: { description: 'no or invalid credentials' },
  403: { description: 'the credential lacks the permission' },
  404: { description: 'FLOW_NOT_FOUND (missing or another tenant\'s) or CONNECTION_NOT_FOUND' },
};
const writeErrors = {
  ...errors,
  400: { description: 'VALIDATION_FAILED (names the field), LIMIT_EXCEEDED, or a structural refusal: DANGLING_EDGE, SELF_LOOP, DUPLICATE_EDGE, CYCLE' },
  412: { description: 'PRECONDITION_FAILED: If-Match names a version the flow moved on from' },
};

export const connectionRoutes = [
  defineRoute({
    ...common,
    method: 'GET',
    path: '/flows/{flowId}/connections',
    operationId: 'listConnections',
    summary: 'list the connections of a flow, in the order they were added (ETag: the flow version)',
    permission: 'view_resources',
    params: flowParams,
    query: listQuery,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(edgeSchema), nextCursor: z.string().nullable() }) }, 400: { description: 'bad limit or cursor' }, ...errors },
    async handler(input) {
      const flow = await visibleFlow(input, input.params.flowId);
      const start = startAfterCursor(flow.edges, input.query.cursor);
      const items = flow.edges.slice(start, start + input.query.limit);
      const end = start + items.length;
      const nextCursor = end < flow.edges.length && items.length > 0 ? encodeCursor(end - 1, items[items.length - 1].id) : null;
      return { status: 200, body: { success: true, items, nextCursor }, headers: etagOf(flow.version) };
    },
  }),
  defineRoute({
    ...common,
    method: 'POST',
    path: '/flows/{flowId}/connections',
    operationId: 'createConnection',
    summary: 'connect two nodes of the flow (If-Match optional)',
    permission: 'edit_resources',
    params: flowParams,
    body: connectionBody,
    responses: { 201: { description: 'created', schema: z.object({ success: z.literal(true), connection: edgeSchema }) }, 409: { description: 'CONNECTION_ID_TAKEN' }, ...writeErrors },
    async handler(input) {
      const connectionId = input.services.newId();
      const { result } = await writeFlow(input, input.params.flowId, { type: 'AddConnection', connectionId, connection: input.body });
      return { status: 201, body: { success: true, connection: findEdge(result.state, connectionId) }, headers: etagOf(result.revision) };
    },
  }),
  defineRoute({
    ...common,
    method: 'PUT',
    path: '/flows/{flowId}/connections/{connectionId}',
    operationId: 'updateConnection',
    summary: 'change a connection: the fields given replace its own, null clears a handle or label (If-Match optional)',
    permission: 'edit_resources',
    params: connectionParams,
    body: updateBody,
    responses: { 200: { description: 'the connection as it is now', schema: z.object({ success: z.literal(true), connection: edgeSchema }) }, ...writeErrors },
    async handler(input) {
      const { flowId, connectionId } = input.params;
      const { result } = await writeFlow(input, flowId, { type: 'UpdateConnection', connectionId, changes: input.body });
      return { status: 200, body: { success: true, connection: findEdge(result.state, connectionId) }, headers: etagOf(result.revision) };
    },
  }),
  defineRoute({
    ...common,
    method: 'DELETE',
    path: '/flows/{flowId}/connections/{connectionId}',
    operationId: 'deleteConnection',
    summary: 'delete a connection (If-Match optional)',
    permission: 'edit_resources',
    params: connectionParams,
    responses: { 200: { description: 'deleted', schema: z.object({ success: z.literal(true), connectionId: z.string(), message: z.string() }) }, ...writeErrors },
    async handler(input) {
      const { flowId, connectionId } = input.params;
      const { result } = await writeFlow(input, flowId, { type: 'RemoveConnection', connectionId });
      return { status: 200, body: { success: true, connectionId, message: 'connection deleted' }, headers: etagOf(result.revision) };
    },
  }),
  defineRoute({
    ...common,
    method: 'POST',
    path: '/flows/{flowId}/connections/validate',
    operationId: 'validateConnections',
    summary:
      'check the whole graph and report every problem, each with its code (DANGLING_EDGE, SELF_LOOP, DUPLICATE_EDGE, CYCLE, UNREACHABLE_NODE, CONDITION_TARGET_WITHOUT_EDGE); optional `connections` are checked as if added to the stored ones; nothing is saved',
    permission: 'view_resources',
    params: flowParams,
    body: validateBody,
    responses: {
      200: { description: 'the verdict', schema: z.object({ success: z.literal(true), valid: z.boolean(), version: z.number(), problems: z.array(problemSchema) }) },
      400: { description: 'VALIDATION_FAILED: a malformed proposed connection' },
      ...errors,
    },
    async handler(input) {
      const flow = await visibleFlow(input, input.params.flowId);
      const proposed = (input.body.connections ?? []).map(({ id, ...c }, i) => ({ id: id ?? `proposed-${i}`, ...c }));
      const problems = validateGraph(flow.nodes, [...flow.edges, ...proposed]);
      return { status: 200, body: { success: true, valid: problems.length === 0, version: flow.version, problems } };
    },
  }),
  defineRoute({
    ...common,
    method: 'POST',
    path: '/flows/{flowId}/connections/batch',
    operationId: 'createConnections',
    summary: 'create several connections in one append: all or none (a refusal names the index in details) (If-Match optional)',
    permission: 'edit_resources',
    params: flowParams,
    body: batchBody,
    responses: { 201: { description: 'all created, in order', schema: z.object({ success: z.literal(true), connections: z.array(edgeSchema) }) }, 413: { description: 'LIMIT_EXCEEDED: the batch is too large for one write' }, ...writeErrors },
    async handler(input) {
      const connections = input.body.connections.map((connection) => ({ connectionId: input.services.newId(), connection }));
      const { result } = await writeFlow(input, input.params.flowId, { type: 'AddConnections', connections });
      return { status: 201, body: { success: true, connections: connections.map((c) => findEdge(result.state, c.connectionId)) }, headers: etagOf(result.revision) };
    },
  }),
  defineRoute({
    ...common,
    method: 'POST',
    path: '/flows/{flowId}/connections/batch-delete',
    operationId: 'deleteConnections',
    summary: 'delete several connections in one append: all or none (an unknown id refuses the batch, naming every unknown id) (If-Match optional)',
    permission: 'edit_resources',
    params: flowParams,
    body: batchDeleteBody,
    responses: { 200: { description: 'all deleted', schema: z.object({ success: z.literal(true), deleted: z.array(z.string()) }) }, ...writeErrors },
    async handler(input) {
      const deleted = [...new Set(input.body.connectionIds)];
      const { result } = await writeFlow(input, input.params.flowId, { type: 'RemoveConnections', connectionIds: deleted });
      return { status: 200, body: { success: true, deleted }, headers: etagOf(result.revision) };
    },
  }),
];
