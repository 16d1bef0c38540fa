import { z } from 'zod';

/**
 * The documented limits of a flow. The decider enforces them (so no writer can get past them),
 * and the zod schemas below let the routes refuse the same input before a command runs.
 */
export const MAX_NODES_PER_FLOW = 500;
export const MAX_EDGES_PER_FLOW = 2000;
export const MAX_FLOW_NAME_LENGTH = 200;
export const MAX_FLOW_DESCRIPTION_LENGTH = 2000;
export const MAX_PROMPT_LENGTH = 100_000;
/** Serialized (UTF-8 JSON) size of one node's `data`. */
export const MAX_NODE_DATA_BYTES = 256 * 1024;
/**
 * Serialized size of all nodes and edges of a flow together: 500 nodes at the per-node maximum
 * would make a 128 MB flow (and a 128 MB FlowReplaced event), which no store or client wants.
 */
export const MAX_FLOW_DEFINITION_BYTES = 5 * 1024 * 1024;
/**
 * Serialized size of the nodes and edges one write appends (create or replace with a graph, a batch
 * of connections). Events travel whole through the bus and the event store: Kafka's default
 * message.max.bytes and EventStoreDB's default max append size are both 1 MiB, so a bigger write
 * could never be relayed. A larger flow is built through node-by-node edits, each far smaller.
 */
export const MAX_WRITE_BYTES = 768 * 1024;
/** Nesting depth of `data.variables`; `{}` and `{a: 1}` have depth 1, `{a: {b: 1}}` depth 2. */
export const MAX_VARIABLES_DEPTH = 5;
/** History entries kept per node in the aggregate (and in the projection); older ones are dropped. */
export const MAX_HISTORY_ENTRIES_PER_NODE = 100;
/** A recorded output bigger than this is stored as a truncated JSON string preview. */
export const MAX_HISTORY_OUTPUT_BYTES = 64 * 1024;
export const MAX_HISTORY_ERROR_LENGTH = 10_000;
export const MAX_WEBHOOK_TIMEOUT_MS = 300_000;
export const MAX_DELAY_MS = 300_000;
export const MAX_CONDITIONS_PER_NODE = 50;
export const MAX_WEBHOOK_HEADERS = 50;
export const MAX_ID_LENGTH = 128;
export const MAX_URL_LENGTH = 2048;
export const MAX_SHORT_TEXT_LENGTH = 200;
export const MAX_TEXT_LENGTH = 10_000;
export const MAX_EDGE_LABEL_LENGTH = 500;
export const MAX_EDGE_DATA_BYTES = 16 * 1024;
export const MAX_TRIGGER_INPUT_SCHEMA_BYTES = 64 * 1024;

/** The same numbers as one object, for the README and for clients (`GET /node-types` may show it). */
export const FLOW_LIMITS = {
  nodesPerFlow: MAX_NODES_PER_FLOW,
  edgesPerFlow: MAX_EDGES_PER_FLOW,
  nameLength: MAX_FLOW_NAME_LENGTH,
  descriptionLength: MAX_FLOW_DESCRIPTION_LENGTH,
  promptLength: MAX_PROMPT_LENGTH,
  nodeDataBytes: MAX_NODE_DATA_BYTES,
  flowDefinitionBytes: MAX_FLOW_DEFINITION_BYTES,
  writeBytes: MAX_WRITE_BYTES,
  variablesDepth: MAX_VARIABLES_DEPTH,
  historyEntriesPerNode: MAX_HISTORY_ENTRIES_PER_NODE,
  historyOutputBytes: MAX_HISTORY_OUTPUT_BYTES,
  webhookTimeoutMs: MAX_WEBHOOK_TIMEOUT_MS,
  delayMs: MAX_DELAY_MS,
  conditionsPerNode: MAX_CONDITIONS_PER_NODE,
  idLength: MAX_ID_LENGTH,
} as const;
export type FlowLimitName = keyof typeof FLOW_LIMITS;

const encoder = new TextEncoder();
/** UTF-8 size of a value's JSON, which is what a store and a response actually carry. */
export function jsonByteLength(value: unknown): number {
  const json = JSON.stringify(value);
  return json === undefined ? 0 : encoder.encode(json).length;
}

/** Nesting depth of objects and arrays: a scalar is 0, `{}` and `[]` are 1. */
export function jsonDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const child of Array.isArray(value) ? value : Object.values(value)) deepest = Math.max(deepest, jsonDepth(child));
  return deepest + 1;
}

/**
 * Node and edge ids end up as URL path segments and as keys of records (per-node triggers and
 * history, read-model documents): a conservative alphabet, no leading `_` or `$`, no dots, and
 * none of the names an object inherits.
 */
const RESERVED_IDS = new Set(['constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty']);
export const idSchema = z
  .string()
  .min(1)
  .max(MAX_ID_LENGTH)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_:-]*$/, 'must start with a letter or digit and contain only letters, digits, _, : and -')
  .refine((id) => !RESERVED_IDS.has(id), 'is a reserved name');
export const nodeIdSchema = idSchema;
export const edgeIdSchema = idSchema;

// No control characters: names show up in lists, mails and logs.
export const flowNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(MAX_FLOW_NAME_LENGTH)
  // \p{Cc} spelled as its two ranges (C0 and DEL+C1): tools in other languages generate values from the pattern.
  .regex(/^[^\u0000-\u001F\u007F-\u009F]*$/, 'must not contain control characters');
export const flowDescriptionSchema = z.string().max(MAX_FLOW_DESCRIPTION_LENGTH);
export const promptSchema = z.string().max(MAX_PROMPT_LENGTH);

/** A JSON object of at most `maxBytes` once serialized. */
export function boundedJsonObject(maxBytes: number) {
  return z
    .record(z.string(), z.json())
    .refine((value) => jsonByteLength(value) <= maxBytes, { message: `must be at most ${maxBytes} bytes as JSON` });
}

/** Any object with a `$secret` key must be exactly `{"$secret": "<text>"}`: a secret variable (flows/secrets.ts). */
function misshapenSecret(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(misshapenSecret);
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, '$secret')) return Object.keys(record).length !== 1 || typeof record.$secret !== 'string';
  return Object.values(record).some(misshapenSecret);
}

export const variablesSchema = z
  .record(z.string(), z.json())
  .refine((value) => jsonDepth(value) <= MAX_VARIABLES_DEPTH, { message: `must be nested at most ${MAX_VARIABLES_DEPTH} levels deep` })
  .refine((value) => !misshapenSecret(value), { message: 'a secret variable is written {"$secret": "<text>"}, with no other key' })
  .describe('values written {"$secret": "<text>"} are sealed when stored, shown masked in every read and given in clear only to the run');
