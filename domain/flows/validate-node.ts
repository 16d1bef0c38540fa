import { z } from 'zod';
import { MAX_NODE_DATA_BYTES, jsonByteLength } from './limits.js';
import { nodeRendererTypeSchema, positionSchema } from './node-data.js';
import { llmModelProblem, nodeDataSchemaFor } from './node-types.js';

/** Same shape as the API's ValidationError entries, so routes can pass these straight through. */
export interface FieldProblem {
  field: string;
  message: string;
}

const nodeFrameSchema = z.object({ type: nodeRendererTypeSchema, position: positionSchema });

export interface NodeValidationContext {
  /** Ids of the flow's nodes as they will be after the write (targets must be among them). */
  nodeIds: Iterable<string>;
  /** The node being validated, if it has an id yet: a condition may not target it. */
  selfId?: string;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/**
 * Turns zod issues into field problems under `prefix` (`data` → `data.conditions.1.operator`).
 * Given the parsed `input`, a problem about a field that is absent says "required" first.
 */
export function issuesToProblems(issues: readonly z.core.$ZodIssue[], prefix: string, input?: unknown): FieldProblem[] {
  return issues.map((issue) => {
    const field = [prefix, ...issue.path.map(String)].filter((p) => p !== '').join('.');
    const absent = input !== undefined && issue.path.length > 0 && valueAt(input, issue.path) === undefined;
    return { field, message: absent ? `required: ${issue.message}` : issue.message };
  });
}

export const prefixProblems = (problems: readonly FieldProblem[], prefix: string): FieldProblem[] =>
  problems.map((p) => ({ field: prefix ? `${prefix}.${p.field}` : p.field, message: p.message }));

function dedupe(problems: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.field}\u0000${p.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Every problem of a node's `data`, with fields named `data.…`: its size, the rules of its
 * `data.nodeType` (node-types.ts), and that condition targets are other nodes of the same flow.
 */
export function validateNodeData(data: unknown, context: NodeValidationContext): FieldProblem[] {
  if (!isObject(data)) return [{ field: 'data', message: 'must be an object' }];
  const bytes = jsonByteLength(data);
  // Do not even parse a body that big: its size is the only thing worth saying.
  if (bytes > MAX_NODE_DATA_BYTES) return [{ field: 'data', message: `must be at most ${MAX_NODE_DATA_BYTES} bytes as JSON (is ${bytes})` }];
  const problems: FieldProblem[] = [];
  const parsed = nodeDataSchemaFor(data.nodeType).safeParse(data);
  if (!parsed.success) problems.push(...issuesToProblems(parsed.error.issues, 'data', data));
  const model = llmModelProblem(data);
  if (model) problems.push({ field: 'data.model', message: model });
  if (Array.isArray(data.conditions)) {
    const ids = new Set(context.nodeIds);
    data.conditions.forEach((condition: unknown, i) => {
      const target = isObject(condition) ? condition.targetNodeId : undefined;
      if (typeof target !== 'string' || target === '') return;
      const field = `data.conditions.${i}.targetNodeId`;
      if (target === context.selfId) problems.push({ field, message: 'must not be the node itself' });
      else if (!ids.has(target)) problems.push({ field, message: `must name a node of this flow (no node ${target})` });
    });
  }
  return dedupe(problems);
}

/**
 * Every problem of a whole node `{type, position, data}`; fields relative to the node
 * (`type`, `position.x`, `data.prompt`). The "validate without saving" route answers these.
 */
export function validateNode(node: unknown, context: NodeValidationContext): FieldProblem[] {
  if (!isObject(node)) return [{ field: '', message: 'must be an object' }];
  const problems: FieldProblem[] = [];
  const frame = nodeFrameSchema.safeParse(node);
  if (!frame.success) problems.push(...issuesToProblems(frame.error.issues, '', node));
  problems.push(...validateNodeData(node.data, context));
  return problems;
}
