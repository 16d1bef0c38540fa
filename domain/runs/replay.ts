import { validationFailed } from '../flows/guards.js';
import { DomainError } from '../shared/decider.js';
import { ancestorsOf, type RunDefinition } from './definition.js';
import type { RunReplay } from './events.js';
import type { RunState } from './state.js';

/**
 * Which nodes of a replay answer from the original run's recording (issue 33, POST
 * /processes/{id}/replay). Pure: the route loads the original run and the flow version.
 *
 * - Every node upstream of `fromNodeId` reuses its recorded output, changed or not: replaying
 *   from a node means "keep what came before it".
 * - With `sideEffects: recorded`, a node that reaches the outside world (webhook, MCP tool,
 *   memory) and is not upstream answers from the recording when its settings did not change; when
 *   no recording fits it is refused before anything runs (REPLAY_NO_RECORDING, naming the nodes),
 *   so a replay never calls the outside world unless `sideEffects: live` said so.
 */
export const SIDE_EFFECT_NODE_TYPES = ['webhook', 'mcp_tool', 'memory'] as const;

export interface ReplayRequest {
  fromNodeId: string | null;
  sideEffects: RunReplay['sideEffects'];
}

/** Equal JSON values, whatever the order of object keys. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const [ka, kb] = [Object.keys(a), Object.keys(b)];
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

const noRecording = (nodes: string[], why: string) =>
  new DomainError('REPLAY_NO_RECORDING', `no recording of the original run fits ${nodes.join(', ')}: ${why}`, 'conflict', { nodes });

export function planReplay(original: RunState, originalId: string, definition: RunDefinition, request: ReplayRequest): RunReplay {
  const recorded = (nodeId: string) => original.nodes[nodeId]?.status === 'completed';
  if (request.fromNodeId !== null && !definition.nodes.some((n) => n.id === request.fromNodeId)) {
    throw validationFailed([{ field: 'body.fromNodeId', message: 'not a node of the flow version replayed' }]);
  }
  const upstream = request.fromNodeId === null ? [] : ancestorsOf(definition, request.fromNodeId);
  const missing = upstream.filter((id) => !recorded(id));
  if (missing.length > 0) throw noRecording(missing, 'upstream of fromNodeId, they did not complete in the original run');

  const reuse = new Set(upstream);
  if (request.sideEffects === 'recorded') {
    const unfit: string[] = [];
    for (const node of definition.nodes) {
      if (reuse.has(node.id) || !(SIDE_EFFECT_NODE_TYPES as readonly unknown[]).includes(node.data.nodeType)) continue;
      const before = original.definition.nodes.find((n) => n.id === node.id);
      if (before && recorded(node.id) && sameJson(before.data, node.data)) reuse.add(node.id);
      else unfit.push(node.id);
    }
    if (unfit.length > 0) throw noRecording(unfit, 'they reach the outside world and changed or did not complete in the original run; replay with sideEffects "live" to call them for real');
  }
  return { of: originalId, fromNodeId: request.fromNodeId, sideEffects: request.sideEffects, reuse: definition.nodes.map((n) => n.id).filter((id) => reuse.has(id)) };
}

/** The original's result for a reused node, or null when its recording is gone (retention ran meanwhile). */
export function recordedResult(original: RunState | null, replay: RunReplay, nodeId: string) {
  const node = original?.nodes[nodeId];
  if (!node || node.status !== 'completed') return null;
  return {
    output: node.output ?? null,
    metadata: { ...node.metadata, replayedFrom: replay.of },
    conditionalResults: node.conditionalResults,
    // Nothing was called: a reused node costs nothing this time.
    usage: { total_tokens: 0, cost: 0 },
  };
}
