import {
  edgeSchema,
  flowDescriptionSchema,
  flowNameSchema,
  idSchema,
  issuesToProblems,
  validateGraph,
  validateNode,
  type EdgeInput,
  type NodeWithId,
} from '../domain/flows/index.js';
import { DESIGNABLE_NODE_TYPES } from './ai-flows-schema.js';

/**
 * Reads a model's answer into a flow and checks it with the rules the flow aggregate and the
 * connections validator use (validateNode per node, validateGraph on the whole). Pure.
 *
 * Cosmetic gaps are filled rather than refused (a missing renderer `type` becomes "custom", a
 * missing position is laid out left to right, a missing edge id is made up): asking a paid model
 * again for those would waste a retry on something no user cares about.
 */

export interface DesignProblem {
  /** Where in the answer: `nodes.2.data.model`, `edges.0.target`; empty for the answer as a whole. */
  field: string;
  message: string;
  /** A graph problem's code (CYCLE, DANGLING_EDGE…) or MALFORMED_JSON. */
  code?: string;
}

export interface DesignedFlow {
  /** Null when the answer had no usable name (the caller falls back to its own). */
  name: string | null;
  description: string | null;
  nodes: NodeWithId[];
  edges: EdgeInput[];
}

export type CheckedAnswer = { ok: true; flow: DesignedFlow } | { ok: false; problems: DesignProblem[] };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The JSON object in an answer: the whole text, a fenced ```json block, or the outermost braces. */
export function extractJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  const fenced = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/.exec(text);
  const candidates = [text.trim(), ...(fenced ? [fenced[1].trim()] : [])];
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  let message = 'the answer is empty';
  for (const candidate of candidates) {
    if (candidate === '') continue;
    try {
      return { ok: true, value: JSON.parse(candidate) };
    } catch (err) {
      message = (err as Error).message;
    }
  }
  return { ok: false, message };
}

function readNodes(raw: unknown[], problems: DesignProblem[]): NodeWithId[] {
  const nodes: NodeWithId[] = [];
  const seen = new Set<string>();
  raw.forEach((node, i) => {
    const at = `nodes.${i}`;
    if (!isObject(node)) return void problems.push({ field: at, message: 'must be an object {id, type, position, data}' });
    const id = idSchema.safeParse(node.id);
    if (!id.success) problems.push(...issuesToProblems(id.error.issues, `${at}.id`, node.id));
    else if (seen.has(id.data)) problems.push({ field: `${at}.id`, message: `duplicate node id ${id.data}` });
    else seen.add(id.data);
    const data = node.data;
    if (isObject(data) && typeof data.nodeType === 'string' && !DESIGNABLE_NODE_TYPES.includes(data.nodeType as never)) {
      problems.push({ field: `${at}.data.nodeType`, message: `must be one of ${DESIGNABLE_NODE_TYPES.join(', ')}` });
    } else if (isObject(data) && data.nodeType === undefined) {
      problems.push({ field: `${at}.data.nodeType`, message: `required: one of ${DESIGNABLE_NODE_TYPES.join(', ')}` });
    }
    nodes.push({
      id: typeof node.id === 'string' ? node.id : `#${i}`,
      type: node.type === undefined ? 'custom' : (node.type as string),
      position: node.position === undefined ? { x: i * 250, y: 0 } : (node.position as NodeWithId['position']),
      data: data as Record<string, unknown>,
    });
  });
  const nodeIds = nodes.map((n) => n.id);
  nodes.forEach((node, i) => {
    for (const p of validateNode(node, { nodeIds, selfId: node.id })) problems.push({ field: p.field ? `nodes.${i}.${p.field}` : `nodes.${i}`, message: p.message });
  });
  return nodes;
}

function readEdges(raw: unknown[], problems: DesignProblem[]): EdgeInput[] {
  const edges: EdgeInput[] = [];
  const taken = new Set(raw.map((e) => (isObject(e) && typeof e.id === 'string' ? e.id : null)).filter((id): id is string => id !== null));
  const seen = new Set<string>();
  raw.forEach((edge, i) => {
    const at = `edges.${i}`;
    if (!isObject(edge)) return void problems.push({ field: at, message: 'must be an object {id, source, target}' });
    let id = edge.id;
    if (id === undefined) {
      let n = i + 1;
      while (taken.has(`e${n}`)) n++;
      id = `e${n}`;
      taken.add(id as string);
    }
    const parsed = edgeSchema.safeParse({ ...edge, id });
    if (!parsed.success) return void problems.push(...issuesToProblems(parsed.error.issues, at, { ...edge, id }));
    if (seen.has(parsed.data.id)) problems.push({ field: `${at}.id`, message: `duplicate edge id ${parsed.data.id}` });
    seen.add(parsed.data.id);
    edges.push(parsed.data);
  });
  return edges;
}

/** A name or description from the answer when it is acceptable as one, else null (never a reason to retry). */
function optionalText(schema: typeof flowNameSchema | typeof flowDescriptionSchema, value: unknown): string | null {
  const parsed = schema.safeParse(value);
  return parsed.success && parsed.data.trim() !== '' ? parsed.data : null;
}

/** Every problem of an answer at once, so one retry can fix them all. */
export function checkAnswer(text: string): CheckedAnswer {
  const json = extractJson(text);
  if (!json.ok) return { ok: false, problems: [{ field: '', code: 'MALFORMED_JSON', message: `the answer is not a JSON object: ${json.message}` }] };
  const answer = json.value;
  if (!isObject(answer)) return { ok: false, problems: [{ field: '', code: 'MALFORMED_JSON', message: 'the answer must be a JSON object {name, nodes, edges}' }] };
  const problems: DesignProblem[] = [];
  if (!Array.isArray(answer.nodes) || answer.nodes.length === 0) problems.push({ field: 'nodes', message: 'required: a non-empty array of nodes' });
  if (answer.edges !== undefined && !Array.isArray(answer.edges)) problems.push({ field: 'edges', message: 'must be an array of edges' });
  const nodes = Array.isArray(answer.nodes) ? readNodes(answer.nodes, problems) : [];
  const edges = Array.isArray(answer.edges) ? readEdges(answer.edges, problems) : [];
  for (const p of validateGraph(nodes, edges)) problems.push({ field: p.edgeId ? `edges (${p.edgeId})` : 'graph', code: p.code, message: p.message });
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, flow: { name: optionalText(flowNameSchema, answer.name), description: optionalText(flowDescriptionSchema, answer.description), nodes, edges } };
}
