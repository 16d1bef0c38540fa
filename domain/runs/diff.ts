import jsonpatch from 'fast-json-patch';
import { maskNodeSecrets } from '../flows/secrets.js';
import type { RunState } from './state.js';

/**
 * Two runs side by side (issue 33, GET /processes/{a}/diff/{b}): per node, matched by node id,
 * what each run did (status, duration, tokens, cost) and how its input and output differ, plus how
 * the two runs' flow definitions differ. Differences are RFC 6902 JSON Patch operations turning
 * run a's value into run b's (an empty list: equal). Node secrets are compared masked, so a diff
 * never shows one. Pure: the caller loads and authorizes the runs.
 */

type Patch = jsonpatch.Operation[];

export interface NodeSide {
  status: string;
  durationMs: number | null;
  tokens: number;
  cost: number;
}

export interface NodeDiff {
  nodeId: string;
  nodeType: string | null;
  /** added / removed: the node is in one run's definition only; changed: anything below differs. */
  change: 'added' | 'removed' | 'changed' | 'same';
  a: NodeSide | null;
  b: NodeSide | null;
  /** What fed the node: the run's inputs and the outputs of the nodes with an edge into it. */
  input: Patch;
  output: Patch;
  /** The node's settings (its data, secrets masked). */
  definition: Patch;
}

export interface RunDiff {
  inputs: Patch;
  nodes: NodeDiff[];
  definition: { nodesAdded: string[]; nodesRemoved: string[]; nodesChanged: string[]; edgesAdded: string[]; edgesRemoved: string[] };
  totals: { a: NodeSide; b: NodeSide };
}

const patch = (a: unknown, b: unknown): Patch => jsonpatch.compare(wrap(a), wrap(b)).map(unwrap);
// compare() diffs objects and arrays only: scalars (a string output) are wrapped, the paths unwrapped.
const wrap = (v: unknown) => ({ v: v === undefined ? null : v });
const unwrap = (op: jsonpatch.Operation): jsonpatch.Operation => ({ ...op, path: op.path.replace(/^\/v/, '') }) as jsonpatch.Operation;

function sideOf(run: RunState, nodeId: string): NodeSide | null {
  const node = run.nodes[nodeId];
  if (!run.definition.nodes.some((n) => n.id === nodeId)) return null;
  return { status: node?.status ?? 'pending', durationMs: node?.executionTime ?? null, tokens: node?.usage?.total_tokens ?? 0, cost: node?.usage?.cost ?? 0 };
}

/** The run's inputs and the outputs of the nodes with an edge into `nodeId`, by node id. */
function inputOf(run: RunState, nodeId: string): unknown {
  const upstream = run.definition.edges.filter((e) => e.target === nodeId).map((e) => e.source);
  return { inputs: run.inputs, upstream: Object.fromEntries(upstream.map((id) => [id, run.nodes[id]?.output ?? null])) };
}

const dataOf = (run: RunState, nodeId: string) => {
  const node = run.definition.nodes.find((n) => n.id === nodeId);
  return node ? maskNodeSecrets(node.data) : null;
};

export function diffRuns(a: RunState, b: RunState): RunDiff {
  const ids = [...new Set([...a.definition.nodes.map((n) => n.id), ...b.definition.nodes.map((n) => n.id)])];
  const nodes = ids.map((nodeId): NodeDiff => {
    const [sa, sb] = [sideOf(a, nodeId), sideOf(b, nodeId)];
    const nodeType = String((dataOf(b, nodeId) ?? dataOf(a, nodeId))?.nodeType ?? '') || null;
    const input = sa && sb ? patch(inputOf(a, nodeId), inputOf(b, nodeId)) : [];
    const output = sa && sb ? patch(a.nodes[nodeId]?.output, b.nodes[nodeId]?.output) : [];
    const definition = sa && sb ? patch(dataOf(a, nodeId), dataOf(b, nodeId)) : [];
    const same = sa && sb && sa.status === sb.status && !input.length && !output.length && !definition.length;
    const change = !sa ? 'added' : !sb ? 'removed' : same ? 'same' : 'changed';
    return { nodeId, nodeType, change, a: sa, b: sb, input, output, definition };
  });
  const edgeKey = (e: { id: string; source: string; target: string }) => `${e.id}:${e.source}->${e.target}`;
  const [edgesA, edgesB] = [new Map(a.definition.edges.map((e) => [edgeKey(e), e.id])), new Map(b.definition.edges.map((e) => [edgeKey(e), e.id]))];
  const total = (run: RunState): NodeSide => ({
    status: run.status,
    durationMs: run.startedAt && run.finishedAt ? Date.parse(run.finishedAt) - Date.parse(run.startedAt) : null,
    tokens: run.usage.total_tokens,
    cost: run.usage.cost,
  });
  return {
    inputs: patch(a.inputs, b.inputs),
    nodes,
    definition: {
      nodesAdded: nodes.filter((n) => n.change === 'added').map((n) => n.nodeId),
      nodesRemoved: nodes.filter((n) => n.change === 'removed').map((n) => n.nodeId),
      nodesChanged: nodes.filter((n) => n.definition.length > 0).map((n) => n.nodeId),
      edgesAdded: [...edgesB].filter(([k]) => !edgesA.has(k)).map(([, id]) => id),
      edgesRemoved: [...edgesA].filter(([k]) => !edgesB.has(k)).map(([, id]) => id),
    },
    totals: { a: total(a), b: total(b) },
  };
}
