import { ancestorsOf, continuesOnError, graphIndex, type RunDefinition, type RunNode } from './definition.js';
import { runNodeNotFound } from './errors.js';
import type { OverrideConfig } from './events.js';
import { nodeStateOf, type RunState } from './state.js';
import type { TemplateContext } from './template.js';

/**
 * What a node sees when it runs (DESIGN.md section 5):
 * - `inputs`: the run's inputs, for every node (start nodes live on them);
 * - `previous`: the output of the predecessor whose edge was taken; when several were, an object
 *   keyed by their ids; null for a start node (use `input` below for "previous, else the inputs");
 * - `nodes`: `{<id>: {output}}` for every upstream node that finished (transitively, not only
 *   direct predecessors); nodes of other branches are left out, since whether they finished
 *   first would depend on timing;
 * - `variables`: the node's `data.variables`.
 * A predecessor that failed with `continueOnError` shows `{error: {code, message}}` as its output.
 */
export interface NodeInputs extends TemplateContext {
  /** `previous` when the node has a predecessor, else the run's inputs: what kinds that pass data on use. */
  input: unknown;
}

function finishedOutput(state: RunState, definition: RunDefinition, id: string): { output: unknown } | undefined {
  const n = nodeStateOf(state, id);
  if (n?.status === 'completed') return { output: n.output ?? null };
  if (n?.status === 'failed' && continuesOnError(graphIndex(definition).byId.get(id))) {
    return { output: { error: { code: n.error?.code ?? 'FAILED', message: n.error?.message ?? '' } } };
  }
  return undefined;
}

export function nodeInputs(definition: RunDefinition, state: RunState, nodeId: string): NodeInputs {
  const index = graphIndex(definition);
  const node = index.byId.get(nodeId);
  if (!node) throw runNodeNotFound(nodeId);
  const nodes: Record<string, { output: unknown }> = {};
  for (const id of ancestorsOf(definition, nodeId)) {
    const finished = finishedOutput(state, definition, id);
    if (finished) nodes[id] = finished;
  }
  const feeding = [...new Set(index.incoming.get(nodeId))].filter((s) => {
    if (!Object.hasOwn(nodes, s)) return false;
    const named = index.conditionTargets.get(s)?.has(nodeId) ?? false;
    if (!named) return true;
    return (nodeStateOf(state, s)?.conditionalResults ?? []).some((r) => r.targetNodeId === nodeId && r.result === true);
  });
  const previous = feeding.length === 0 ? null : feeding.length === 1 ? nodes[feeding[0]].output : Object.fromEntries(feeding.map((s) => [s, nodes[s].output]));
  const variables = node.data.variables && typeof node.data.variables === 'object' ? (node.data.variables as Record<string, unknown>) : {};
  return { inputs: state.inputs, previous, nodes, variables, input: feeding.length === 0 ? state.inputs : previous };
}

/**
 * A node's data with the run's overrideConfig applied: to the node of a single-node run, and to
 * every llm node of a flow run. Fields the override leaves out keep the node's values.
 */
export function effectiveNodeData(node: RunNode, state: Pick<RunState, 'mode' | 'nodeId' | 'overrideConfig'>): RunNode['data'] {
  const override: OverrideConfig | null = state.overrideConfig;
  if (!override) return node.data;
  const applies = state.mode === 'node' ? node.id === state.nodeId : node.data.nodeType === 'llm';
  if (!applies) return node.data;
  return {
    ...node.data,
    ...(override.model !== undefined && { model: override.model }),
    ...(override.temperature !== undefined && { temperature: override.temperature }),
    ...(override.maxTokens !== undefined && { maxTokens: override.maxTokens }),
  };
}
