import { z } from 'zod';
import { executeFlowCommand, flowScopeOf, parseIfMatch } from '../../commands/flows.js';
import { PreconditionFailedError, type HandleResult } from '../../commands/handle.js';
import {
  CONDITION_OPERATORS,
  flowNotFound,
  flowStreamId,
  foldFlow,
  idSchema,
  isVisibleTo,
  MAX_ID_LENGTH,
  nodeNotFound,
  toFlowView,
  type FlowEvent,
  type FlowNode,
  type FlowState,
  type FlowView,
} from '../../domain/flows/index.js';
import { InvalidCursorError } from '../../infra/ports/read-store.js';
import { flowViewOf, getFlow, type FlowRecord } from '../../projections/flows.js';
import { ValidationError } from '../errors.js';
import type { RouteInput } from '../route.js';
import { MAX_PAGE_SIZE } from './pagination.js';

/** What the flow and node routes share: params, response schemas, the write path, node paging. */

export const flowParams = z.strictObject({ flowId: idSchema });
export const nodeParams = z.strictObject({ flowId: idSchema, nodeId: idSchema });
export const historyEntryParams = z.strictObject({ flowId: idSchema, nodeId: idSchema, entryId: z.string().min(1).max(MAX_ID_LENGTH) });

// ---------------------------------------------------------------- response schemas (OpenAPI)

const conditionOut = z.looseObject({
  prompt: z.string().nullable().optional(),
  targetNodeId: z.string().nullable().optional(),
  usePrompt: z.boolean().optional(),
  operator: z.enum(CONDITION_OPERATORS).optional(),
  value: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
});
export const nodeOut = z.object({
  id: z.string(),
  type: z.string().describe('canvas renderer, e.g. custom'),
  position: z.object({ x: z.number(), y: z.number() }),
  data: z
    .looseObject({
      agentName: z.string().nullable().optional(),
      llm: z.string().nullable().optional(),
      model: z.string().nullable().optional(),
      prompt: z.string().nullable().optional(),
      agentObjective: z.string().nullable().optional(),
      nodeType: z.string().optional(),
      isAsync: z.boolean().optional(),
      startNode: z.boolean().optional(),
      url: z.string().nullable().optional(),
      conditions: z.array(conditionOut).optional(),
      webhookConfig: z.looseObject({ url: z.string().optional(), method: z.string().optional(), headers: z.record(z.string(), z.string()).optional(), timeout: z.number().optional() }).nullable().optional(),
      variables: z.record(z.string(), z.unknown()).optional(),
    })
    .describe('every field the client sent is kept'),
});
export const edgeOut = z.object({
  id: z.string(),
  source: z.string(),
  target: z.string(),
  sourceHandle: z.string().nullable().optional(),
  targetHandle: z.string().nullable().optional(),
  label: z.string().nullable().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
const triggerOut = z.object({
  enabled: z.boolean(),
  allowedMethods: z.array(z.string()),
  inputSchema: z.record(z.string(), z.unknown()).nullable(),
  hasKey: z.boolean(),
  keyCreatedAt: z.string().nullable(),
});
const flowFields = {
  id: z.string(),
  name: z.string(),
  description: z.string(),
  archived: z.boolean(),
  version: z.number().int().describe('stream revision of the last event; the ETag'),
  createdAt: z.string(),
  updatedAt: z.string(),
  ownerId: z.string(),
  orgId: z.string().nullable(),
  workspaceId: z.string().nullable(),
};
export const flowOut = z.object({ ...flowFields, nodes: z.array(nodeOut), edges: z.array(edgeOut), trigger: triggerOut });
export const flowSummaryOut = z.object({ ...flowFields, nodeCount: z.number().int(), edgeCount: z.number().int() });
export const flowReply = z.object({ success: z.literal(true), flow: flowOut });
export const nodeReply = z.object({ success: z.literal(true), node: nodeOut, message: z.string() });
export const messageReply = z.object({ success: z.literal(true), message: z.string() });

export const readErrors = {
  401: { description: 'no or invalid credentials' },
  403: { description: 'FORBIDDEN: the credential lacks the permission' },
  404: { description: "FLOW_NOT_FOUND (missing, deleted or another tenant's)" },
};
export const writeErrors = {
  ...readErrors,
  400: { description: 'VALIDATION_FAILED (names the field, also headers.if-match) or LIMIT_EXCEEDED' },
  412: { description: 'PRECONDITION_FAILED: If-Match names a version the flow moved on from' },
};
export const nodeErrors = { ...writeErrors, 404: { description: "FLOW_NOT_FOUND, or NODE_NOT_FOUND (also for a node of another flow)" } };

// ---------------------------------------------------------------- reads

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

// ---------------------------------------------------------------- writes

type FlowWrite = Parameters<typeof executeFlowCommand>[3];

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
 * One flow write for a user request: the caller's scope and If-Match, then read-your-writes, then
 * the flow from the read model. A write that changed nothing (archiving an archived flow) still
 * waits for the read model to reach the version it decided on, so the answer is never older than
 * the caller's previous write. If the projection is late (X-Read-Model: pending) the answer comes
 * from the aggregate's own state, which the read model will equal.
 */
export async function writeFlow(input: AnyInput, flowId: string, command: FlowWrite): Promise<FlowWriteResult> {
  const { services } = input;
  // A new flow has no version to match: If-Match is only read for existing flows.
  const expectedRevision = command.type === 'CreateFlow' ? undefined : ifMatchOf(input);
  const scope = flowScopeOf(input.principal!);
  let result: HandleResult<FlowState, FlowEvent>;
  try {
    result = await executeFlowCommand(services.eventStore, input.command, flowId, command, { scope, expectedRevision });
  } catch (err) {
    // The If-Match check runs before the decider's scope check: a 412 about a flow the caller
    // cannot see would reveal that it exists, so it becomes the usual 404.
    if (err instanceof PreconditionFailedError) {
      const state = foldFlow(await services.eventStore.readStream(flowStreamId(flowId)));
      if (!state.exists || state.deleted || !isVisibleTo(state, scope)) throw flowNotFound();
    }
    throw err;
  }
  let position = result.position;
  if (position === null && result.revision >= 0) {
    const [last] = await services.eventStore.readStream(flowStreamId(flowId), { fromRevision: result.revision, maxCount: 1 });
    position = last?.position ?? null;
  }
  await input.settle(position, flowStreamId(flowId));
  if (result.state.deleted) return { result, flow: null };
  const record = await getFlow(services.readStore, flowId, scope);
  const flow = record && record.version >= result.revision ? flowViewOf(record) : toFlowView(result.state);
  return { result, flow };
}

// ---------------------------------------------------------------- paging a flow's nodes

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
