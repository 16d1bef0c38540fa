import { jsonByteLength } from '../flows/limits.js';
import { graphIndex, type RunDefinition } from './definition.js';
import { outputKeyOf } from './kinds/output.js';
import { MAX_RUN_OUTPUTS_BYTES } from './limits.js';
import { nodeStateOf, type RunState } from './state.js';

/**
 * A run's result (RunCompleted.outputs):
 * - single-node run: `{<nodeId>: output}`;
 * - a flow with `output` nodes: each completed one's output under its `data.outputKey`, else its id
 *   (two nodes with the same key: the later one in the flow wins);
 * - a flow without `output` nodes: the output of each completed node none of whose successors
 *   completed (the ends of the branches that ran), by node id.
 */
export function runOutputs(definition: RunDefinition, state: RunState): Record<string, unknown> {
  const completed = (id: string) => nodeStateOf(state, id)?.status === 'completed';
  const outputOf = (id: string) => nodeStateOf(state, id)?.output ?? null;
  const outputs: Record<string, unknown> = {};
  const outputNodes = definition.nodes.filter((n) => n.data.nodeType === 'output');
  if (state.mode === 'node' || outputNodes.length === 0) {
    const index = graphIndex(definition);
    const hasCompletedSuccessor = new Set<string>();
    for (const [target, sources] of index.incoming) if (completed(target)) for (const s of sources) hasCompletedSuccessor.add(s);
    for (const n of definition.nodes) if (completed(n.id) && !hasCompletedSuccessor.has(n.id)) outputs[n.id] = outputOf(n.id);
    return outputs;
  }
  for (const n of outputNodes) {
    if (!completed(n.id)) continue;
    Object.defineProperty(outputs, outputKeyOf(n), { value: outputOf(n.id), enumerable: true, writable: true, configurable: true });
  }
  return outputs;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function previewJson(value: unknown, maxBytes: number): string {
  const bytes = encoder.encode(JSON.stringify(value) ?? 'null');
  return decoder.decode(bytes.subarray(0, Math.max(0, maxBytes))).replace(/\uFFFD+$/, '');
}

/**
 * Outputs as RunCompleted carries them: whole when they fit MAX_RUN_OUTPUTS_BYTES, else every value
 * replaced by the start of its JSON text (an equal share of the budget each). The full values stay
 * in the NodeCompleted events.
 */
export function boundRunOutputs(outputs: Record<string, unknown>): { outputs: Record<string, unknown>; outputsTruncated: boolean } {
  if (jsonByteLength(outputs) <= MAX_RUN_OUTPUTS_BYTES) return { outputs, outputsTruncated: false };
  const keys = Object.keys(outputs);
  // Room for the keys and JSON punctuation, then an equal share each, halved because a JSON text
  // stored as a string can double (every quote and backslash gets escaped).
  const share = Math.floor((MAX_RUN_OUTPUTS_BYTES - jsonByteLength(keys) - 16 * keys.length) / Math.max(1, keys.length) / 2);
  const cut: Record<string, unknown> = {};
  for (const k of keys) Object.defineProperty(cut, k, { value: previewJson(outputs[k], share), enumerable: true, writable: true, configurable: true });
  return { outputs: cut, outputsTruncated: true };
}
