import { z } from 'zod';
import { CONDITION_OPERATORS, idSchema, MAX_ID_LENGTH } from '../../domain/flows/index.js';

/** The flow and node routes' params, response schemas (OpenAPI) and documented errors. */

export const flowParams = z.strictObject({ flowId: idSchema });
export const nodeParams = z.strictObject({ flowId: idSchema, nodeId: idSchema });
export const historyEntryParams = z.strictObject({ flowId: idSchema, nodeId: idSchema, entryId: z.string().min(1).max(MAX_ID_LENGTH) });

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
