import { z } from 'zod';
import {
  MAX_CONDITIONS_PER_NODE,
  MAX_ID_LENGTH,
  MAX_NODE_DATA_BYTES,
  MAX_SHORT_TEXT_LENGTH,
  MAX_TEXT_LENGTH,
  MAX_URL_LENGTH,
  MAX_WEBHOOK_HEADERS,
  MAX_WEBHOOK_TIMEOUT_MS,
  jsonByteLength,
  promptSchema,
  variablesSchema,
} from './limits.js';
import { isSealedSecret } from './secrets.js';

/** The longest sealed form of a MAX_TEXT_LENGTH text: `sealed:<hint>:v1.<iv>.<tag>.<base64url of ≤ 3 bytes per character>`. */
const MAX_SEALED_TEXT_LENGTH = Math.ceil((MAX_TEXT_LENGTH * 3 * 4) / 3) + 200;

/**
 * The fields every node's `data` may carry, whatever its type: the seed's fields, typed, with any
 * other JSON field passed through untouched ("the response keeps every field the request sent").
 * Rules that depend on `data.nodeType` live in node-types.ts, rules that need the rest of the flow
 * in validate-node.ts.
 */

/** `data.nodeType`: the node's behaviour (DESIGN.md section 5); `node.type` is only the canvas renderer. */
export const NODE_TYPES = ['llm', 'webhook', 'transform', 'condition', 'input', 'output', 'delay', 'mcp_tool', 'memory', 'wait_signal', 'sleep', 'set_state', 'continue_as_new', 'query'] as const;
export type NodeType = (typeof NODE_TYPES)[number];
/** Kinds only a workflow can run (signals, durable timers, workflow state); a plain run fails them with WORKFLOW_ONLY_NODE. */
export const WORKFLOW_ONLY_NODE_TYPES = ['wait_signal', 'sleep', 'set_state', 'continue_as_new', 'query'] as const satisfies readonly NodeType[];

export const CONDITION_OPERATORS = [
  'contains',
  'not_contains',
  'equals',
  'not_equals',
  'starts_with',
  'ends_with',
  'regex',
  'gt',
  'lt',
  'is_empty',
  'is_not_empty',
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];
/** Operators that look at the output alone and need no `value`. */
export const VALUELESS_OPERATORS: readonly ConditionOperator[] = ['is_empty', 'is_not_empty'];

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const httpUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(MAX_URL_LENGTH);

/** Returns why a regex source does not compile, or null when it does. */
export function regexError(source: string): string | null {
  try {
    new RegExp(source);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

const isNumeric = (v: unknown) => (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)));

export const conditionSchema = z
  .looseObject({
    prompt: promptSchema.nullable().optional().describe('with usePrompt: a yes/no question put to the node model about its output'),
    targetNodeId: z.string().max(MAX_ID_LENGTH).nullable().optional().describe('node whose incoming edge from this node is taken only when the condition holds'),
    usePrompt: z.boolean().optional(),
    operator: z.enum(CONDITION_OPERATORS).optional(),
    value: z.union([z.string().max(MAX_TEXT_LENGTH), z.number(), z.boolean(), z.null()]).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.usePrompt) {
      if (!c.prompt || c.prompt.trim() === '') ctx.addIssue({ code: 'custom', path: ['prompt'], message: 'a usePrompt condition needs a prompt' });
      return;
    }
    if (c.operator === undefined) {
      ctx.addIssue({ code: 'custom', path: ['operator'], message: `required: one of ${CONDITION_OPERATORS.join(', ')}` });
      return;
    }
    if (VALUELESS_OPERATORS.includes(c.operator)) return;
    if (c.value === undefined || c.value === null) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `operator ${c.operator} needs a value` });
    } else if (c.operator === 'regex') {
      const why = typeof c.value === 'string' ? regexError(c.value) : 'must be a string';
      if (why) ctx.addIssue({ code: 'custom', path: ['value'], message: `not a valid regular expression: ${why}` });
    } else if ((c.operator === 'gt' || c.operator === 'lt') && !isNumeric(c.value)) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `operator ${c.operator} needs a number` });
    }
  });
export type Condition = z.infer<typeof conditionSchema>;

/**
 * A header value: text a client sends, or its sealed form in stored events (secrets.ts), which is
 * longer than the text it seals (base64 of up to 3 UTF-8 bytes per character, plus IV and tag).
 */
const headerValueSchema = z
  .string()
  .max(MAX_SEALED_TEXT_LENGTH)
  .refine((v) => isSealedSecret(v) || v.length <= MAX_TEXT_LENGTH, `Too big: expected string to have <=${MAX_TEXT_LENGTH} characters`)
  .describe('sealed when stored, shown masked (••••1234) in every read; send the mask back to keep the stored value');

export const webhookConfigSchema = z.looseObject({
  url: z.union([z.literal(''), httpUrlSchema]).optional().describe('http(s) URL called by a webhook node'),
  method: z.enum(HTTP_METHODS).optional().describe('HTTP method, POST when absent'),
  headers: z
    .record(z.string().max(MAX_SHORT_TEXT_LENGTH), headerValueSchema)
    .refine((h) => Object.keys(h).length <= MAX_WEBHOOK_HEADERS, `at most ${MAX_WEBHOOK_HEADERS} headers`)
    .optional(),
  timeout: z.number().int().positive().max(MAX_WEBHOOK_TIMEOUT_MS).optional().describe(`milliseconds, at most ${MAX_WEBHOOK_TIMEOUT_MS}`),
});
export type WebhookConfig = z.infer<typeof webhookConfigSchema>;

const optionalText = (max: number) => z.string().max(max).nullable().optional();

/** The shape shared by every node type; `null` means "not set" for the seed's optional fields. */
export const nodeDataShape = {
  agentName: optionalText(MAX_SHORT_TEXT_LENGTH),
  llm: optionalText(MAX_SHORT_TEXT_LENGTH).describe('LLM provider'),
  model: optionalText(MAX_SHORT_TEXT_LENGTH),
  prompt: promptSchema.nullable().optional().describe('template over {{inputs.x}}, {{previous}}, {{nodes.<id>.output}}, {{variables.x}}'),
  agentObjective: optionalText(MAX_TEXT_LENGTH),
  nodeType: z.enum(NODE_TYPES).optional(),
  isAsync: z.boolean().optional(),
  startNode: z.boolean().optional().describe('a run starts here; when no node says so, nodes without incoming edges start'),
  url: optionalText(MAX_URL_LENGTH),
  conditions: z.array(conditionSchema).max(MAX_CONDITIONS_PER_NODE).optional(),
  webhookConfig: webhookConfigSchema.nullable().optional(),
  variables: variablesSchema.optional(),
};

export const baseNodeDataSchema = z.looseObject(nodeDataShape);
export type NodeData = z.infer<typeof baseNodeDataSchema>;

/** For request bodies: the common shape plus the size limit (per-type rules run in the decider). */
export const nodeDataSchema = baseNodeDataSchema.refine((d) => jsonByteLength(d) <= MAX_NODE_DATA_BYTES, {
  message: `must be at most ${MAX_NODE_DATA_BYTES} bytes as JSON`,
});

/** `node.type`: the canvas renderer (`custom` in the seed), free text to the service. */
export const nodeRendererTypeSchema = z.string().min(1).max(MAX_SHORT_TEXT_LENGTH);
export const positionSchema = z.object({ x: z.number(), y: z.number() });
export type Position = z.infer<typeof positionSchema>;
