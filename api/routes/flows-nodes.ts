import { z } from 'zod';
import {
  CONDITION_OPERATORS,
  FLOW_LIMITS,
  MAX_NODES_PER_FLOW,
  nodeDataSchema,
  nodeIdSchema,
  nodeInputShape,
  nodeRendererTypeSchema,
  nodeTypeCatalogue,
  positionSchema,
  validateNode,
  type FieldProblem,
  type FlowNode,
} from '../../domain/flows/index.js';
import { ValidationError } from '../errors.js';
import { defineRoute } from '../route.js';
import { InvalidCursorError } from '../../ports/read-store.js';
import { etagOf, nodeOf, visibleFlow, writeFlow, type FlowWriteResult } from './flows.js';
import { flowParams, messageReply, nodeErrors, nodeOut, nodeParams, nodeReply, readErrors, writeErrors } from './flows-schemas.js';
import { MAX_PAGE_SIZE } from './pagination.js';
import { nodeHistoryRoutes } from './flows-nodes-history.js';

/**
 * Nodes of a flow. Adding one follows the seed's contract to the letter:
 * `POST /flows/{flowId}/nodes {type, position: {x, y}, data}` → 201 `{success: true, node: {id, type,
 * position, data}, message}`, with every field of `data` the client sent kept. An optional `id`
 * lets a canvas keep the id it already drew the node with (409 NODE_ID_TAKEN when used).
 * Per-type rules (`data.nodeType`) run in the decider and come back as 400 VALIDATION_FAILED with
 * the field named (`body.data.prompt`).
 */

/** Like every list (1–100, default 20). */
export const nodeListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(20),
  cursor: z.string().max(512).optional(),
});

/**
 * Pages over the nodes in insertion order. The opaque cursor holds the last node of the page, its
 * index and the node that followed it, so a page boundary survives edits in between: it resumes
 * after that last node; if it was removed, at the node that followed it; if both went, at the
 * index where they were (a later page may then repeat a node, but never skips one still there
 * unless several nodes before the boundary were removed too).
 */
export function pageNodes(nodes: FlowNode[], limit: number, cursor: string | undefined): { items: FlowNode[]; nextCursor: string | null } {
  const start = cursor === undefined ? 0 : startAfter(nodes, cursor);
  const items = nodes.slice(start, start + limit);
  const end = start + items.length;
  const last = items[items.length - 1];
  const nextCursor = end < nodes.length && last ? Buffer.from(JSON.stringify({ i: end - 1, id: last.id, next: nodes[end].id })).toString('base64url') : null;
  return { items, nextCursor };
}

function startAfter(nodes: FlowNode[], cursor: string): number {
  let parsed: unknown = null;
  try {
    if (/^[A-Za-z0-9_-]+$/.test(cursor)) parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const { i, id, next } = (parsed ?? {}) as { i?: unknown; id?: unknown; next?: unknown };
  if (!Number.isInteger(i) || (i as number) < 0 || typeof id !== 'string' || typeof next !== 'string') throw new InvalidCursorError();
  const at = nodes.findIndex((n) => n.id === id);
  if (at >= 0) return at + 1;
  const following = nodes.findIndex((n) => n.id === next);
  return following >= 0 ? following : Math.min(i as number, nodes.length);
}

const tag = 'Nodes';
const auth = 'bearer' as const;

const addBody = z.strictObject({ id: nodeIdSchema.optional().describe('optional: the id to use (else the service makes one)'), ...nodeInputShape });
const updateBody = z.strictObject({
  id: nodeIdSchema.optional().describe('may be sent along with the node; must then be the id in the path'),
  type: nodeRendererTypeSchema.optional(),
  position: positionSchema.optional(),
  data: nodeDataSchema.optional().describe("merged into the node's data key by key; a key set to null is kept as null"),
});
const duplicateBody = z.strictObject({
  id: nodeIdSchema.optional().describe("the copy's id (else the service makes one)"),
  offset: positionSchema.optional().describe('added to the original position; default {x: 40, y: 40}'),
});
const problemOut = z.object({ field: z.string(), message: z.string() });
const TOP_LEVEL_FIELDS = new Set(['id', 'type', 'position', 'data']);

function nodeAnswer({ flow }: FlowWriteResult, nodeId: string, message: string, status = 200) {
  return { status, body: { success: true, node: nodeOf(flow!, nodeId), message }, headers: etagOf(flow!.version) };
}

export const nodeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/node-types',
    operationId: 'listNodeTypes',
    summary: 'the node types (`data.nodeType`) with a description and the JSON Schema of their `data`; also the condition operators and the flow limits',
    tag,
    auth,
    responses: {
      200: {
        description: 'the catalogue',
        schema: z.object({
          success: z.literal(true),
          nodeTypes: z.array(z.object({ nodeType: z.string(), label: z.string(), description: z.string(), dataSchema: z.record(z.string(), z.unknown()) })),
          conditionOperators: z.array(z.string()),
          limits: z.record(z.string(), z.number()),
        }),
      },
      401: readErrors[401],
    },
    async handler() {
      return { status: 200, body: { success: true, nodeTypes: nodeTypeCatalogue(), conditionOperators: CONDITION_OPERATORS, limits: FLOW_LIMITS } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/flows/{flowId}/nodes',
    operationId: 'listNodes',
    summary: 'the nodes of a flow in the order they were added (ETag: the flow version)',
    tag,
    auth,
    permission: 'view_resources',
    params: flowParams,
    query: nodeListQuery,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(nodeOut), nextCursor: z.string().nullable() }) }, ...readErrors },
    async handler(input) {
      const flow = await visibleFlow(input, input.params.flowId);
      const page = pageNodes(flow.nodes, input.query.limit, input.query.cursor);
      return { status: 200, body: { success: true, ...page }, headers: etagOf(flow.version) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/flows/{flowId}/nodes',
    operationId: 'addNode',
    summary: 'add a node: {type, position: {x, y}, data} → 201 {success, node, message} (If-Match optional)',
    tag,
    auth,
    permission: 'edit_resources',
    params: flowParams,
    body: addBody,
    responses: { 201: { description: 'added; the node keeps every field sent', schema: nodeReply }, 409: { description: 'NODE_ID_TAKEN' }, ...writeErrors },
    seedStatuses: [201, 400, 401, 404],
    async handler(input) {
      const { id, ...node } = input.body;
      const nodeId = id ?? input.services.newId();
      const written = await writeFlow(input, input.params.flowId, { type: 'AddNode', nodeId, node });
      return nodeAnswer(written, nodeId, 'Node added successfully', 201);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/flows/{flowId}/nodes/validate',
    operationId: 'validateNode',
    summary: 'check a node body as adding it to this flow would, without saving: every problem, with the field named as the add route names it',
    tag,
    auth,
    permission: 'view_resources',
    params: flowParams,
    body: z.record(z.string(), z.unknown()).describe('a node as for adding one: {id?, type, position, data}'),
    responses: {
      200: { description: 'the verdict', schema: z.object({ success: z.literal(true), valid: z.boolean(), problems: z.array(problemOut) }) },
      400: { description: 'VALIDATION_FAILED: the body is not a JSON object' },
      ...readErrors,
    },
    async handler(input) {
      const flow = await visibleFlow(input, input.params.flowId);
      const body = input.body;
      const problems: FieldProblem[] = Object.keys(body)
        .filter((k) => !TOP_LEVEL_FIELDS.has(k))
        .map((k) => ({ field: `body.${k}`, message: 'unknown field' }));
      const ids = flow.nodes.map((n) => n.id);
      let selfId: string | undefined;
      if (body.id !== undefined) {
        const parsed = nodeIdSchema.safeParse(body.id);
        if (!parsed.success) problems.push({ field: 'body.id', message: parsed.error.issues[0]?.message ?? 'invalid id' });
        else if (ids.includes(parsed.data)) problems.push({ field: 'body.id', message: `node id ${parsed.data} is already used in this flow` });
        else selfId = parsed.data;
      }
      if (ids.length >= MAX_NODES_PER_FLOW) problems.push({ field: 'body', message: `the flow already has the maximum of ${MAX_NODES_PER_FLOW} nodes` });
      const nodeIds = selfId === undefined ? ids : [...ids, selfId];
      for (const p of validateNode(body, { nodeIds, selfId })) problems.push({ field: `body.${p.field}`.replace(/\.$/, ''), message: p.message });
      return { status: 200, body: { success: true, valid: problems.length === 0, problems } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/flows/{flowId}/nodes/{nodeId}',
    operationId: 'updateNode',
    summary: "update a node: type and position replace, data is merged key by key over the node's (If-Match optional)",
    tag,
    auth,
    permission: 'edit_resources',
    params: nodeParams,
    body: updateBody,
    responses: { 200: { description: 'the node as it is now', schema: nodeReply }, ...nodeErrors },
    async handler(input) {
      const { flowId, nodeId } = input.params;
      const { id, ...patch } = input.body;
      if (id !== undefined && id !== nodeId) throw new ValidationError([{ field: 'body.id', message: 'must be the node id of the path (ids do not change)' }]);
      const written = await writeFlow(input, flowId, { type: 'UpdateNode', nodeId, patch });
      return nodeAnswer(written, nodeId, 'Node updated successfully');
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/flows/{flowId}/nodes/{nodeId}',
    operationId: 'deleteNode',
    summary: 'delete a node with its connections; conditions of other nodes that targeted it are removed in the same change (If-Match optional)',
    tag,
    auth,
    permission: 'edit_resources',
    params: nodeParams,
    responses: {
      200: {
        description: 'deleted',
        schema: messageReply.extend({ nodeId: z.string(), removedConnectionIds: z.array(z.string()), updatedNodeIds: z.array(z.string()).describe('nodes that lost a condition') }),
      },
      ...nodeErrors,
    },
    async handler(input) {
      const { flowId, nodeId } = input.params;
      const { result, flow } = await writeFlow(input, flowId, { type: 'DeleteNode', nodeId });
      const event = result.events.find((e) => e.type === 'NodeDeleted');
      const removedConnectionIds = event?.type === 'NodeDeleted' ? event.data.removedEdgeIds : [];
      const updatedNodeIds = event?.type === 'NodeDeleted' ? event.data.updatedConditions.map((u) => u.nodeId) : [];
      return {
        status: 200,
        body: { success: true, message: 'Node deleted successfully', nodeId, removedConnectionIds, updatedNodeIds },
        headers: etagOf(flow!.version),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/flows/{flowId}/nodes/{nodeId}/duplicate',
    operationId: 'duplicateNode',
    summary: 'copy a node (type and data; not its connections, trigger or history) under a new id, shifted by offset (If-Match optional)',
    tag,
    auth,
    permission: 'edit_resources',
    params: nodeParams,
    body: duplicateBody,
    responses: { 201: { description: 'the copy', schema: nodeReply }, 409: { description: 'NODE_ID_TAKEN' }, ...nodeErrors },
    async handler(input) {
      const { flowId, nodeId } = input.params;
      const newNodeId = input.body.id ?? input.services.newId();
      const written = await writeFlow(input, flowId, { type: 'DuplicateNode', nodeId, newNodeId, offset: input.body.offset });
      return nodeAnswer(written, newNodeId, 'Node duplicated successfully', 201);
    },
  }),
  ...nodeHistoryRoutes,
];
