import {
  FLOW_LIMITS,
  LLM_PROVIDER_MODELS,
  MAX_FLOW_DESCRIPTION_LENGTH,
  MAX_FLOW_NAME_LENGTH,
  nodeTypeCatalogue,
  type NodeType,
} from '../domain/flows/index.js';
import type { LlmMessage } from '../ports/llm.js';

/**
 * What AI flow generation tells the model: the answer's JSON Schema, built from the flow domain's
 * node-type catalogue (the same zod schemas the decider validates with), and the prompts of the
 * first attempt and of the retry. Pure: no I/O.
 */

/** Node types a model can fill in on its own; an mcp_tool node needs the id of an MCP server registered by the owner, which the model cannot know. */
export const DESIGNABLE_NODE_TYPES: readonly NodeType[] = nodeTypeCatalogue()
  .map((t) => t.nodeType)
  .filter((t) => t !== 'mcp_tool');

const ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_:-]*$';

/** The catalogue's `data` schema of one type, with `nodeType` pinned and its `$defs` renamed so all types can share one document. */
function dataSchemaOf(nodeType: NodeType, defs: Record<string, unknown>): Record<string, unknown> {
  const info = nodeTypeCatalogue().find((t) => t.nodeType === nodeType)!;
  const { $schema: _ignored, $defs, ...rest } = info.dataSchema as Record<string, unknown> & { $defs?: Record<string, unknown> };
  const rename = (json: string) => json.replace(/#\/\$defs\/([A-Za-z0-9_]+)/g, (_m, name: string) => `#/$defs/${nodeType}_${name}`);
  for (const [name, def] of Object.entries($defs ?? {})) defs[`${nodeType}_${name}`] = JSON.parse(rename(JSON.stringify(def)));
  const schema = JSON.parse(rename(JSON.stringify(rest))) as { properties?: Record<string, unknown>; required?: string[] };
  return {
    ...schema,
    description: `${info.label}: ${info.description}`,
    properties: { ...schema.properties, nodeType: { const: nodeType } },
    required: [...new Set(['nodeType', ...(schema.required ?? [])])],
  };
}

// Module scope is safe: a memo of a schema built from constants only, the same for every service; no per-service data.
let cached: Record<string, unknown> | null = null;
/** JSON Schema (draft 2020-12) of the answer the model must give. */
export function flowAnswerSchema(): Record<string, unknown> {
  if (cached) return cached;
  const defs: Record<string, unknown> = {};
  const nodeVariants = DESIGNABLE_NODE_TYPES.map((nodeType) => ({
    type: 'object',
    required: ['id', 'type', 'position', 'data'],
    properties: {
      id: { type: 'string', pattern: ID_PATTERN, maxLength: FLOW_LIMITS.idLength },
      type: { const: 'custom', description: 'canvas renderer; always "custom"' },
      position: { type: 'object', required: ['x', 'y'], properties: { x: { type: 'number' }, y: { type: 'number' } }, description: 'canvas position, left to right in run order' },
      data: dataSchemaOf(nodeType, defs),
    },
  }));
  cached = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    required: ['name', 'nodes', 'edges'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: MAX_FLOW_NAME_LENGTH },
      description: { type: 'string', maxLength: MAX_FLOW_DESCRIPTION_LENGTH },
      nodes: { type: 'array', minItems: 1, maxItems: FLOW_LIMITS.nodesPerFlow, items: { oneOf: nodeVariants } },
      edges: {
        type: 'array',
        maxItems: FLOW_LIMITS.edgesPerFlow,
        items: {
          type: 'object',
          required: ['id', 'source', 'target'],
          properties: {
            id: { type: 'string', pattern: ID_PATTERN, maxLength: FLOW_LIMITS.idLength },
            source: { type: 'string', description: 'id of the node the edge leaves' },
            target: { type: 'string', description: 'id of the node the edge enters' },
            label: { type: 'string' },
          },
        },
      },
    },
    $defs: defs,
  };
  return cached;
}

/** Providers and models an llm node may name, as the model is told them. */
export function knownModelsText(): string {
  return Object.entries(LLM_PROVIDER_MODELS)
    .map(([provider, models]) => {
      if (provider === 'offline') return '- offline: any model name (a deterministic echo for dry runs; do not use it unless asked)';
      return `- ${provider}: ${models ? models.join(', ') : 'any model name the operator\'s server loaded (only if asked)'}`;
    })
    .join('\n');
}

/** The provider and model llm nodes should use unless the description asks for others. */
export interface NodeModelHint {
  llm: string;
  model: string;
}

export function systemPrompt(hint: NodeModelHint | null): string {
  const types = nodeTypeCatalogue()
    .filter((t) => DESIGNABLE_NODE_TYPES.includes(t.nodeType))
    .map((t) => `- ${t.nodeType}: ${t.description}`)
    .join('\n');
  return [
    'You design automation flows. A flow is a directed acyclic graph: nodes do the work, edges {id, source, target} pass one node\'s output to the next.',
    'Answer with ONE JSON object that matches the JSON Schema below, and nothing else: no prose, no comments.',
    '',
    'Node types (data.nodeType):',
    types,
    '',
    'Rules the service checks (an answer breaking one is refused):',
    '- Node ids and edge ids are unique, start with a letter or digit and contain only letters, digits, _, : and -.',
    '- Every node has type "custom", a position {x, y} and data with its nodeType and the fields that type requires.',
    '- Every edge joins two different existing nodes; no duplicate edges; no cycles.',
    '- Every node is reachable from a start node (data.startNode: true, or when no node says so, the nodes without incoming edges). Usually the first node is an input node.',
    '- A condition node\'s conditions each name a targetNodeId, and an edge must go from the condition node to that target. Operators: contains, not_contains, equals, not_equals, starts_with, ends_with, regex, gt, lt (these need a value), is_empty, is_not_empty; or usePrompt: true with a yes/no prompt.',
    '- Templates (prompt, template, bodyTemplate) may use {{inputs.x}} (run inputs), {{previous}} (the incoming output), {{nodes.<id>.output}} and {{variables.x}}.',
    '- An llm node names data.llm (provider) and data.model from this list only:',
    knownModelsText(),
    hint ? `  Use llm "${hint.llm}" with model "${hint.model}" unless the description asks for another listed one.` : '',
    '',
    'JSON Schema of the answer:',
    JSON.stringify(flowAnswerSchema()),
  ]
    .filter((line) => line !== '')
    .join('\n');
}

export function designRequest(description: string): string {
  return `Design a flow for this description:\n\n${description}`;
}

/** The problems of an answer as the retry states them; the list is bounded so a broken answer cannot blow up the prompt. */
export function retryRequest(problems: ReadonlyArray<{ field: string; message: string; code?: string }>): string {
  const shown = problems.slice(0, 50).map((p) => `- ${p.code ? `[${p.code}] ` : ''}${p.field ? `${p.field}: ` : ''}${p.message}`);
  if (problems.length > shown.length) shown.push(`- … and ${problems.length - shown.length} more`);
  return [
    'The flow you proposed was refused by the validator:',
    ...shown,
    'Fix every problem and answer again with the complete corrected flow as ONE JSON object matching the schema, and nothing else.',
  ].join('\n');
}

/** Messages of one attempt: the first asks, the retry adds the refused answer and its problems. */
export function attemptMessages(
  hint: NodeModelHint | null,
  description: string,
  previous?: { answer: string; problems: ReadonlyArray<{ field: string; message: string; code?: string }> },
): LlmMessage[] {
  const messages: LlmMessage[] = [
    { role: 'system', content: systemPrompt(hint) },
    { role: 'user', content: designRequest(description) },
  ];
  if (previous) messages.push({ role: 'assistant', content: previous.answer }, { role: 'user', content: retryRequest(previous.problems) });
  return messages;
}
