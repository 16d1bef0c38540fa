import { z } from 'zod';
import {
  MAX_EDGE_DATA_BYTES,
  MAX_EDGE_LABEL_LENGTH,
  MAX_FLOW_DESCRIPTION_LENGTH,
  MAX_HISTORY_ERROR_LENGTH,
  MAX_ID_LENGTH,
  MAX_SHORT_TEXT_LENGTH,
  MAX_TRIGGER_INPUT_SCHEMA_BYTES,
  boundedJsonObject,
  edgeIdSchema,
  flowNameSchema,
  nodeIdSchema,
} from './limits.js';
import { mcpExposureShape } from './mcp-exposure.js';
import { baseNodeDataSchema, conditionSchema, nodeDataSchema, nodeRendererTypeSchema, positionSchema } from './node-data.js';

/** A node as stored: `data.nodeType` is its behaviour, `type` only its canvas renderer. */
export const nodeSchema = z.object({ id: nodeIdSchema, type: nodeRendererTypeSchema, position: positionSchema, data: baseNodeDataSchema });
export type FlowNode = z.infer<typeof nodeSchema>;

/** A request's node without an id (add node): the common shape; per-type rules run in the decider. */
export const nodeInputShape = { type: nodeRendererTypeSchema, position: positionSchema, data: nodeDataSchema };

/** A connection's fields; `source` and `target` are plain strings so a wrong id is a DANGLING_EDGE, not a format error. */
export const connectionShape = {
  source: z.string().min(1).max(MAX_ID_LENGTH),
  target: z.string().min(1).max(MAX_ID_LENGTH),
  sourceHandle: z.string().max(MAX_SHORT_TEXT_LENGTH).nullable().optional(),
  targetHandle: z.string().max(MAX_SHORT_TEXT_LENGTH).nullable().optional(),
  label: z.string().max(MAX_EDGE_LABEL_LENGTH).nullable().optional(),
  data: boundedJsonObject(MAX_EDGE_DATA_BYTES).optional(),
};
export const edgeSchema = z.object({ id: edgeIdSchema, ...connectionShape });
export type FlowEdge = z.infer<typeof edgeSchema>;
export type ConnectionInput = Omit<FlowEdge, 'id'>;

/** Methods a public trigger may be called with. */
export const TRIGGER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type TriggerMethod = (typeof TRIGGER_METHODS)[number];
export const triggerSettingsShape = {
  enabled: z.boolean(),
  allowedMethods: z
    .array(z.enum(TRIGGER_METHODS))
    .min(1)
    .max(TRIGGER_METHODS.length)
    .refine((m) => new Set(m).size === m.length, 'must not repeat a method'),
  /** A JSON Schema the trigger's input is checked against (by the execution context), or null. */
  inputSchema: boundedJsonObject(MAX_TRIGGER_INPUT_SCHEMA_BYTES).nullable(),
};
export const triggerSettingsSchema = z.object(triggerSettingsShape);
export type TriggerSettingsInput = z.infer<typeof triggerSettingsSchema>;

/** sha256 hex of a trigger key; the key itself is shown once and never stored. */
export const keyHashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest');

export const HISTORY_STATUSES = ['completed', 'failed', 'skipped', 'stopped'] as const;
export type HistoryStatus = (typeof HISTORY_STATUSES)[number];
/** Token counts and cost (US dollars); providers report more, which passes through. */
export const usageSchema = z.looseObject({
  promptTokens: z.number().int().min(0).optional(),
  completionTokens: z.number().int().min(0).optional(),
  totalTokens: z.number().int().min(0).optional(),
  cost: z.number().min(0).optional(),
});
export type Usage = z.infer<typeof usageSchema>;
export const historyEntrySchema = z.object({
  entryId: z.string().min(1).max(MAX_ID_LENGTH),
  processId: z.string().min(1).max(MAX_ID_LENGTH),
  status: z.enum(HISTORY_STATUSES),
  /** Any JSON; over MAX_HISTORY_OUTPUT_BYTES it is a truncated JSON string and outputTruncated is true. */
  output: z.json(),
  outputTruncated: z.boolean(),
  error: z.string().max(MAX_HISTORY_ERROR_LENGTH).nullable(),
  usage: usageSchema.nullable(),
  /** Milliseconds. */
  executionTime: z.number().min(0),
  at: z.string(),
});
export type HistoryEntry = z.infer<typeof historyEntrySchema>;

const at = z.string();
const nodes = z.array(nodeSchema);
const edges = z.array(edgeSchema);
const description = z.string().max(MAX_FLOW_DESCRIPTION_LENGTH);

/** Every event of a `flow-<id>` stream. Who did it is in the event metadata (`actorId`), not repeated here. */
export const flowEventSchemas = {
  FlowCreated: z.object({
    flowId: z.string().min(1),
    name: flowNameSchema,
    description,
    ownerId: z.string().min(1),
    orgId: z.string().nullable(),
    workspaceId: z.string().nullable(),
    nodes,
    edges,
    createdAt: at,
  }),
  FlowReplaced: z.object({ name: flowNameSchema, description, nodes, edges, at, restoredFrom: z.number().int().nonnegative().optional() }),
  FlowDeleted: z.object({ at }),
  FlowArchived: z.object({ at }),
  FlowUnarchived: z.object({ at }),
  FlowRenamed: z.object({ name: flowNameSchema, previousName: z.string(), at }),
  /** `duplicatedFrom` names the copied node when the node came from DuplicateNode. */
  NodeAdded: z.object({ node: nodeSchema, duplicatedFrom: z.string().nullable(), at }),
  /** A patch: `type` and `position` replace, `data`'s top-level keys are merged over the node's (see applyNodePatch). */
  NodeUpdated: z.object({
    nodeId: z.string(),
    type: nodeRendererTypeSchema.optional(),
    position: positionSchema.optional(),
    data: baseNodeDataSchema.optional(),
    at,
  }),
  /**
   * One event for the whole removal: the node, its edges (`removedEdgeIds`), and the conditions of
   * other nodes that pointed at it (`updatedConditions` holds each such node's remaining conditions).
   */
  NodeDeleted: z.object({
    nodeId: z.string(),
    removedEdgeIds: z.array(z.string()),
    updatedConditions: z.array(z.object({ nodeId: z.string(), conditions: z.array(conditionSchema) })),
    at,
  }),
  ConnectionAdded: z.object({ edge: edgeSchema, at }),
  /** The connection as it is after the update. */
  ConnectionUpdated: z.object({ edge: edgeSchema, at }),
  ConnectionRemoved: z.object({ edgeId: z.string(), at }),
  FlowTriggerUpdated: z.object({ ...triggerSettingsShape, at }),
  FlowTriggerKeyRegenerated: z.object({ keyHash: keyHashSchema, at }),
  NodeTriggerUpdated: z.object({ nodeId: z.string(), ...triggerSettingsShape, at }),
  NodeTriggerKeyRegenerated: z.object({ nodeId: z.string(), keyHash: keyHashSchema, at }),
  /** The flow as a tool of the service's MCP server (`/api/mcp`): the whole setting each time. */
  FlowMcpExposureSet: z.object({ ...mcpExposureShape, at }),
  NodeExecutionRecorded: z.object({ nodeId: z.string(), entry: historyEntrySchema }),
  NodeHistoryEntryDeleted: z.object({ nodeId: z.string(), entryId: z.string(), at }),
  NodeHistoryCleared: z.object({ nodeId: z.string(), at }),
  FlowHistoryCleared: z.object({ at }),
  /**
   * An operator re-wrote the flow's secrets (POST /admin/flows/secrets/reseal): `nodes` carries
   * each node's `webhookConfig`/`variables` sealed (applied like a NodeUpdated patch);
   * `clearEvents` is how many earlier events held secrets in clear, `rewrittenInPlace` whether the
   * store re-wrote those (SQLite) or keeps them (EventStoreDB is append-only; reads mask them).
   */
  FlowSecretsResealed: z.object({
    nodes: z.array(z.object({ nodeId: z.string(), data: baseNodeDataSchema })),
    clearEvents: z.number().int().min(0),
    rewrittenInPlace: z.boolean(),
    at,
  }),
};

export type FlowEventType = keyof typeof flowEventSchemas;
type Data<K extends FlowEventType> = z.infer<(typeof flowEventSchemas)[K]>;
export type FlowEvent = { [K in FlowEventType]: { type: K; data: Data<K> } }[FlowEventType];
export type FlowEventOf<K extends FlowEventType> = Extract<FlowEvent, { type: K }>;
export const FLOW_EVENT_TYPES = Object.keys(flowEventSchemas) as FlowEventType[];
