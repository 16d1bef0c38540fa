import { z } from 'zod';
import { HISTORY_STATUSES } from '../../domain/flows/index.js';
import { listNodeHistory } from '../../projections/flows.js';
import { defineRoute } from '../route.js';
import { etagOf, nodeOf, visibleFlow, writeFlow, type FlowWriteResult } from './flows.js';
import { flowParams, historyEntryParams, messageReply, nodeErrors, nodeParams, readErrors } from './flows-schemas.js';
import { pageQuery } from './pagination.js';

/**
 * Node execution history: runs record entries (the execution context, through
 * RecordNodeExecution); these routes read and prune them. The newest 100 entries per node are
 * kept. Pruning moves the flow's version (it is an event of the flow stream) but not its updatedAt.
 */

const tag = 'Nodes';
const auth = 'bearer' as const;

const entryOut = z.object({
  entryId: z.string(),
  processId: z.string(),
  status: z.enum(HISTORY_STATUSES),
  output: z.unknown().describe('the node output; a truncated JSON string when outputTruncated'),
  outputTruncated: z.boolean(),
  error: z.string().nullable(),
  usage: z.looseObject({ promptTokens: z.number().optional(), completionTokens: z.number().optional(), totalTokens: z.number().optional(), cost: z.number().optional() }).nullable(),
  executionTime: z.number().describe('milliseconds'),
  at: z.string(),
});

const done = ({ flow }: FlowWriteResult, message: string) => ({ status: 200, body: { success: true, message }, headers: etagOf(flow!.version) });

export const nodeHistoryRoutes = [
  defineRoute({
    method: 'GET',
    path: '/flows/{flowId}/nodes/{nodeId}/history',
    operationId: 'listNodeHistory',
    summary: "a node's execution history, newest first",
    tag,
    auth,
    permission: 'view_resources',
    params: nodeParams,
    query: pageQuery,
    responses: {
      200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(entryOut), nextCursor: z.string().nullable() }) },
      ...readErrors,
      404: nodeErrors[404],
    },
    async handler(input) {
      const { flowId, nodeId } = input.params;
      nodeOf(await visibleFlow(input, flowId), nodeId);
      const page = await listNodeHistory(input.services.readStore, flowId, nodeId, { limit: input.query.limit, cursor: input.query.cursor ?? null });
      return { status: 200, body: { success: true, items: page.items, nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/flows/{flowId}/nodes/{nodeId}/history/{entryId}',
    operationId: 'deleteNodeHistoryEntry',
    summary: "delete one entry of a node's history (If-Match optional)",
    tag,
    auth,
    permission: 'edit_resources',
    params: historyEntryParams,
    responses: { 200: { description: 'deleted', schema: messageReply }, ...nodeErrors, 404: { description: 'FLOW_NOT_FOUND, NODE_NOT_FOUND or HISTORY_ENTRY_NOT_FOUND' } },
    async handler(input) {
      const { flowId, nodeId, entryId } = input.params;
      return done(await writeFlow(input, flowId, { type: 'DeleteHistoryEntry', nodeId, entryId }), 'History entry deleted');
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/flows/{flowId}/nodes/{nodeId}/history',
    operationId: 'clearNodeHistory',
    summary: "clear a node's whole history (If-Match optional)",
    tag,
    auth,
    permission: 'edit_resources',
    params: nodeParams,
    responses: { 200: { description: 'cleared (also when it was empty)', schema: messageReply }, ...nodeErrors },
    async handler(input) {
      const { flowId, nodeId } = input.params;
      return done(await writeFlow(input, flowId, { type: 'ClearNodeHistory', nodeId }), 'Node history cleared');
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/flows/{flowId}/history',
    operationId: 'clearFlowHistory',
    summary: 'clear the history of every node of a flow (If-Match optional)',
    tag,
    auth,
    permission: 'edit_resources',
    params: flowParams,
    responses: { 200: { description: 'cleared (also when it was empty)', schema: messageReply }, ...nodeErrors },
    async handler(input) {
      return done(await writeFlow(input, input.params.flowId, { type: 'ClearFlowHistory' }), 'Flow history cleared');
    },
  }),
];
