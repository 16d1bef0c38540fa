import { z } from 'zod';
import { startNodeIds } from '../flows/graph.js';
import type { Condition, NodeData } from '../flows/node-data.js';

/**
 * What a run executes: the flow's nodes and edges as they stood at `flowVersion`, reduced to what
 * execution reads (no canvas positions, renderers, labels or handles). It travels inside
 * RunRequested, so editing the flow during a run changes nothing for that run.
 */
export const runNodeSchema = z.object({ id: z.string().min(1), data: z.record(z.string(), z.json()) });
export const runEdgeSchema = z.object({ id: z.string().min(1), source: z.string().min(1), target: z.string().min(1) });
export const runDefinitionSchema = z.object({ nodes: z.array(runNodeSchema), edges: z.array(runEdgeSchema) });

export interface RunNode {
  id: string;
  data: NodeData & Record<string, unknown>;
}
export interface RunEdge {
  id: string;
  source: string;
  target: string;
}
export interface RunDefinition {
  nodes: RunNode[];
  edges: RunEdge[];
}

/** Anything node- and edge-shaped, such as a FlowState's nodes and edges. */
type NodeLike = { id: string; data: unknown };
type EdgeLike = { id: string; source: string; target: string };

/**
 * The snapshot for a run: every node and edge for a flow run; the one node and no edge for a
 * single-node run (its conditions are still evaluated and reported, they just route nowhere).
 */
export function toRunDefinition(nodes: readonly NodeLike[], edges: readonly EdgeLike[], onlyNodeId?: string): RunDefinition {
  const picked = onlyNodeId === undefined ? nodes : nodes.filter((n) => n.id === onlyNodeId);
  return {
    nodes: picked.map((n) => ({ id: n.id, data: (n.data ?? {}) as RunNode['data'] })),
    edges: onlyNodeId === undefined ? edges.map((e) => ({ id: e.id, source: e.source, target: e.target })) : [],
  };
}

export const conditionsOf = (node: RunNode): Condition[] => (Array.isArray(node.data.conditions) ? node.data.conditions : []);
/** Documented node flag: the node's failure does not fail the run (see scheduler.ts). */
export const continuesOnError = (node: RunNode | undefined) => node?.data.continueOnError === true;

/** Everything the scheduler needs about the graph, computed once per definition. */
export interface GraphIndex {
  byId: Map<string, RunNode>;
  /** Sources of each node's incoming edges (repeated when several edges join the same pair). */
  incoming: Map<string, string[]>;
  starts: Set<string>;
  /** Topological order; nodes on a cycle (which a stored flow never has) are left out. */
  order: string[];
  /** For each node, the targets its conditions name. */
  conditionTargets: Map<string, Set<string>>;
}

const indexes = new WeakMap<RunDefinition, GraphIndex>();

/** Memoized by definition object: a run's definition never changes, the scheduler runs after every step. */
export function graphIndex(definition: RunDefinition): GraphIndex {
  const cached = indexes.get(definition);
  if (cached) return cached;
  const byId = new Map(definition.nodes.map((n) => [n.id, n]));
  const incoming = new Map<string, string[]>(definition.nodes.map((n) => [n.id, []]));
  const outgoing = new Map<string, string[]>(definition.nodes.map((n) => [n.id, []]));
  for (const e of definition.edges) {
    if (e.source === e.target || !byId.has(e.source) || !byId.has(e.target)) continue;
    incoming.get(e.target)!.push(e.source);
    outgoing.get(e.source)!.push(e.target);
  }
  const conditionTargets = new Map<string, Set<string>>();
  for (const n of definition.nodes) {
    const targets = conditionsOf(n)
      .map((c) => c?.targetNodeId)
      .filter((t): t is string => typeof t === 'string' && t !== '');
    conditionTargets.set(n.id, new Set(targets));
  }
  const index: GraphIndex = {
    byId,
    incoming,
    starts: new Set(startNodeIds(definition.nodes, definition.edges)),
    order: topologicalOrder(definition.nodes, incoming, outgoing),
    conditionTargets,
  };
  indexes.set(definition, index);
  return index;
}

/** Kahn's algorithm, stable in definition order. */
function topologicalOrder(nodes: readonly RunNode[], incoming: Map<string, string[]>, outgoing: Map<string, string[]>): string[] {
  const remaining = new Map(nodes.map((n) => [n.id, incoming.get(n.id)!.length]));
  const queue = nodes.filter((n) => remaining.get(n.id) === 0).map((n) => n.id);
  const order: string[] = [];
  while (queue.length > 0) {
    const id = queue.shift()!;
    order.push(id);
    for (const next of outgoing.get(id)!) {
      const left = remaining.get(next)! - 1;
      remaining.set(next, left);
      if (left === 0) queue.push(next);
    }
  }
  return order;
}

/** Every node upstream of `nodeId` (transitively), nearest first. */
export function ancestorsOf(definition: RunDefinition, nodeId: string): string[] {
  const { incoming } = graphIndex(definition);
  const seen = new Set<string>();
  const queue = [...(incoming.get(nodeId) ?? [])];
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (seen.has(id) || id === nodeId) continue;
    seen.add(id);
    queue.push(...(incoming.get(id) ?? []));
  }
  return [...seen];
}
