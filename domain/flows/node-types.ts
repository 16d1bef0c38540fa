import { z } from 'zod';
import { MAX_DELAY_MS, MAX_ID_LENGTH, MAX_SHORT_TEXT_LENGTH, boundedJsonObject, promptSchema } from './limits.js';
import { KNOWN_LLM_PROVIDERS, LLM_PROVIDER_MODELS, isKnownModel, isKnownProvider, modelsOf } from './llm-catalogue.js';
import { metadataFilterSchema, metadataSchema } from '../memory/limits.js';
import { NODE_TYPES, baseNodeDataSchema, conditionSchema, httpUrlSchema, webhookConfigSchema, type NodeType } from './node-data.js';

/**
 * One zod schema per `data.nodeType`: the validation the decider runs, and (through
 * `z.toJSONSchema`) the documentation `GET /api/node-types` serves. Type-specific fields are
 * required where the node cannot run without them; everything else stays optional and any other
 * JSON field passes through.
 */
/**
 * Why an llm node's model is not one its provider offers, or null. Separate from the schema because
 * zod skips object refinements once a field failed, and a client should hear about every problem.
 */
export function llmModelProblem(data: { nodeType?: unknown; llm?: unknown; model?: unknown }): string | null {
  if (data.nodeType !== 'llm' || !isKnownProvider(data.llm) || typeof data.model !== 'string' || data.model.trim() === '') return null;
  return isKnownModel(data.llm, data.model) ? null : `unknown model for ${data.llm}; known: ${modelsOf(data.llm)?.join(', ')}`;
}

const nonBlank = (schema: z.ZodString) => schema.refine((s) => s.trim() !== '', 'must not be empty');
const template = nonBlank(promptSchema);

const llmData = baseNodeDataSchema
  .extend({
    llm: z.enum(KNOWN_LLM_PROVIDERS).describe('LLM provider'),
    model: nonBlank(z.string().max(MAX_SHORT_TEXT_LENGTH)).describe(
      `model of the provider: ${Object.entries(LLM_PROVIDER_MODELS)
        .map(([p, models]) => `${p}: ${models ? models.join(', ') : 'any'}`)
        .join('; ')}`,
    ),
    prompt: template.describe('template over {{inputs.x}}, {{previous}}, {{nodes.<id>.output}}, {{variables.x}}'),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().positive().max(1_000_000).optional(),
  })
  .superRefine((d, ctx) => {
    const problem = llmModelProblem(d);
    if (problem) ctx.addIssue({ code: 'custom', path: ['model'], message: problem });
  });

const webhookData = baseNodeDataSchema.extend({
  webhookConfig: webhookConfigSchema.extend({ url: httpUrlSchema.describe('http(s) URL to call') }),
  bodyTemplate: promptSchema.optional().describe('template of the request body; the node input as JSON when absent'),
});

const transformData = baseNodeDataSchema.extend({
  template: template.describe('output template over {{inputs.x}}, {{previous}}, {{nodes.<id>.output}}, {{variables.x}}'),
});

const conditionData = baseNodeDataSchema.extend({
  conditions: z.array(conditionSchema).min(1, 'a condition node needs at least one condition'),
});

const inputData = baseNodeDataSchema.extend({
  inputKey: z.string().max(MAX_SHORT_TEXT_LENGTH).optional().describe('the run input this node passes on; all inputs when absent'),
  inputSchema: boundedJsonObject(64 * 1024).optional().describe('JSON Schema the run inputs are checked against'),
});

const outputData = baseNodeDataSchema.extend({
  outputKey: z.string().max(MAX_SHORT_TEXT_LENGTH).optional().describe("name of this output in the run's result; the node id when absent"),
  template: promptSchema.optional().describe('shapes the output; the previous output when absent'),
});

const delayData = baseNodeDataSchema.extend({
  delayMs: z.number().int().min(0).max(MAX_DELAY_MS).describe(`milliseconds to wait, at most ${MAX_DELAY_MS}`),
});

const mcpToolData = baseNodeDataSchema.extend({
  mcpServerId: nonBlank(z.string().max(MAX_ID_LENGTH)).describe('a registered MCP server of the same owner'),
  toolName: nonBlank(z.string().max(MAX_SHORT_TEXT_LENGTH)),
  arguments: boundedJsonObject(64 * 1024).optional().describe('tool arguments; string values are templates'),
});

export const MEMORY_OPERATIONS = ['save', 'search', 'update', 'delete'] as const;
const memoryTemplate = z.string().max(MAX_SHORT_TEXT_LENGTH);
const memoryData = baseNodeDataSchema
  .extend({
    memoryOperation: z.enum(MEMORY_OPERATIONS).describe('what the node does with the flow owner\'s memories (POST /api/db/memory)'),
    text: promptSchema.optional().describe('save, update: the memory text, a template; save uses the previous output when absent'),
    query: promptSchema.optional().describe('search: a template; the previous output when absent'),
    memoryId: memoryTemplate.optional().describe('update, delete: the memory, a template'),
    scope: z
      .strictObject({ userId: memoryTemplate.optional(), agentId: memoryTemplate.optional(), runId: memoryTemplate.optional() })
      .optional()
      .describe('templates; userId defaults to the flow owner, and save records runId = the run\'s processId unless given; delete without memoryId deletes this scope (named explicitly)'),
    filters: metadataFilterSchema.optional().describe('search: metadata equality or $in/$nin/$ne/$gt/$gte/$lt/$lte; string values are templates'),
    metadata: metadataSchema.optional().describe('save, update: scalar values; strings are templates'),
    limit: z.number().int().min(1).max(100).optional().describe('search: results, 10 when absent'),
    resultFormat: z.enum(['text', 'json']).optional().describe('search output: the texts one per line (default), or the scored results as JSON'),
  })
  .superRefine((d, ctx) => {
    if (d.memoryOperation === 'update' && !d.memoryId) ctx.addIssue({ code: 'custom', path: ['memoryId'], message: 'an update needs memoryId' });
    if (d.memoryOperation === 'update' && d.text === undefined && d.metadata === undefined) ctx.addIssue({ code: 'custom', path: ['text'], message: 'an update needs text or metadata' });
    const namesScope = Object.values(d.scope ?? {}).some((v) => v !== undefined && v.trim() !== '');
    if (d.memoryOperation === 'delete' && !d.memoryId && !namesScope) ctx.addIssue({ code: 'custom', path: ['memoryId'], message: 'a delete needs memoryId, or a scope naming what to delete' });
  });

/** Workflow node kinds (issue 13): decided by the workflow aggregate itself; in a plain run they fail with WORKFLOW_ONLY_NODE. */
const MAX_WORKFLOW_SLEEP_MS = 366 * 24 * 3600 * 1000;
const waitSignalData = baseNodeDataSchema.extend({
  signalName: nonBlank(z.string().max(MAX_SHORT_TEXT_LENGTH)).describe('the signal the workflow waits for; the node outputs its payload'),
  timeoutMs: z.number().int().positive().max(MAX_WORKFLOW_SLEEP_MS).optional().describe('fail with SIGNAL_TIMEOUT when no such signal arrives within this many milliseconds'),
});
const sleepData = baseNodeDataSchema
  .extend({
    durationMs: z.number().int().min(0).max(MAX_WORKFLOW_SLEEP_MS).optional().describe('milliseconds to sleep (a durable timer)'),
    until: z.iso.datetime({ offset: true }).optional().describe('ISO time to sleep until'),
  })
  .superRefine((d, ctx) => {
    if ((d.durationMs === undefined) === (d.until === undefined)) ctx.addIssue({ code: 'custom', path: ['durationMs'], message: 'give exactly one of durationMs and until' });
  });
const setStateData = baseNodeDataSchema.extend({
  values: boundedJsonObject(64 * 1024).describe("merged into the workflow's state (queries read it); string values are templates"),
});
const continueAsNewData = baseNodeDataSchema.extend({
  input: z.json().optional().describe("the next execution's input (string values are templates, {{state.x}} included); default: this execution's input"),
});
const queryData = baseNodeDataSchema.extend({
  queryName: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,99}$/, 'a letter or "_", then letters, digits, "_" or "-", at most 100')
    .describe('the name asked for in POST /workflows/{id}/query'),
  result: z.json().describe('the answer, rendered when asked: string values are templates over {{state.x}}, {{inputs.x}} and {{nodes.<id>.output}}'),
});

interface NodeTypeDefinition {
  label: string;
  description: string;
  schema: z.ZodType;
}

export const NODE_TYPE_DEFINITIONS: Record<NodeType, NodeTypeDefinition> = {
  llm: { label: 'LLM', description: 'Puts its prompt (a template) to a language model of a known provider and outputs the answer.', schema: llmData },
  webhook: { label: 'Webhook', description: 'Calls an HTTP(S) endpoint as webhookConfig says and outputs the response body.', schema: webhookData },
  transform: { label: 'Transform', description: 'Renders its template over the inputs and previous outputs; no model involved.', schema: transformData },
  condition: { label: 'Condition', description: 'Evaluates its conditions on its input; each condition opens the edge to its target node.', schema: conditionData },
  input: { label: 'Input', description: "Entry point: passes the run's inputs (or one of them) on.", schema: inputData },
  output: { label: 'Output', description: "Collects a result into the run's output.", schema: outputData },
  delay: { label: 'Delay', description: 'Waits delayMs milliseconds, then passes its input on.', schema: delayData },
  mcp_tool: { label: 'MCP tool', description: 'Calls a tool of a registered MCP server with templated arguments.', schema: mcpToolData },
  memory: { label: 'Memory', description: "Saves, searches (ranked by relevance), updates or deletes the flow owner's memories, as POST /api/db/memory does.", schema: memoryData },
  wait_signal: { label: 'Wait for signal', description: 'Workflows only: waits until the named signal arrives (POST /workflows/{id}/signal) and outputs its payload; SIGNAL_TIMEOUT after timeoutMs.', schema: waitSignalData },
  sleep: { label: 'Sleep', description: 'Workflows only: a durable timer (durationMs or until) that survives restarts.', schema: sleepData },
  set_state: { label: 'Set state', description: "Workflows only: merges values (templates allowed) into the workflow's state, which queries read.", schema: setStateData },
  continue_as_new: {
    label: 'Continue as new',
    description: 'Workflows only: closes this execution and starts a fresh one of the same flow with an empty history, carrying the state, search attributes and memo (input: templates allowed; default the same input).',
    schema: continueAsNewData,
  },
  query: {
    label: 'Query',
    description: "Workflows only: declares a query (POST /workflows/{id}/query with its queryName) whose result template is rendered over the workflow's state when asked, without a worker; the node itself completes at once and passes nothing on.",
    schema: queryData,
  },
};

/** The schema that validates `data` for a node type; the common shape when the type is absent. */
export function nodeDataSchemaFor(nodeType: unknown): z.ZodType {
  return typeof nodeType === 'string' && Object.hasOwn(NODE_TYPE_DEFINITIONS, nodeType) ? NODE_TYPE_DEFINITIONS[nodeType as NodeType].schema : baseNodeDataSchema;
}

export interface NodeTypeInfo {
  nodeType: NodeType;
  label: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the node's `data`. */
  dataSchema: Record<string, unknown>;
}

let catalogue: NodeTypeInfo[] | null = null;
/** What `GET /api/node-types` answers; built once (the schemas never change at run time). */
export function nodeTypeCatalogue(): NodeTypeInfo[] {
  catalogue ??= NODE_TYPES.map((nodeType) => {
    const { label, description, schema } = NODE_TYPE_DEFINITIONS[nodeType];
    // Refinements (model catalogue, regex compiles, sizes) cannot be expressed in JSON Schema; the
    // descriptions say them and the server enforces them.
    const dataSchema = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
    return { nodeType, label, description, dataSchema };
  });
  return catalogue;
}
