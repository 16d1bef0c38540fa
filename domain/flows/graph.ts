/**
 * Connection rules over a flow's nodes and edges: pure functions, used by the decider (which refuses
 * structural problems), by the "validate connections" route (which reports everything) and by AI
 * flow generation (which checks what a model produced). Only `id`, `data.startNode` and
 * `data.conditions[].targetNodeId` of a node matter here.
 */
export const GRAPH_PROBLEM_CODES = ['DANGLING_EDGE', 'SELF_LOOP', 'DUPLICATE_EDGE', 'CYCLE', 'UNREACHABLE_NODE', 'CONDITION_TARGET_WITHOUT_EDGE'] as const;
export type GraphProblemCode = (typeof GRAPH_PROBLEM_CODES)[number];
/** The problems that a stored flow never has: the decider refuses any write that would create one. */
export const STRUCTURAL_PROBLEM_CODES: readonly GraphProblemCode[] = ['DANGLING_EDGE', 'SELF_LOOP', 'DUPLICATE_EDGE', 'CYCLE'];

export interface GraphProblem {
  code: GraphProblemCode;
  message: string;
  /** The nodes concerned; for CYCLE, the cycle in order (each points to the next, the last to the first). */
  nodeIds?: string[];
  edgeId?: string;
  /** DUPLICATE_EDGE: the earlier edge this one repeats. */
  duplicateOf?: string;
  /** CONDITION_TARGET_WITHOUT_EDGE: index in the source node's `data.conditions`. */
  conditionIndex?: number;
}

export interface GraphNode {
  id: string;
  data?: { startNode?: unknown; conditions?: unknown } | Record<string, unknown>;
}
export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  sourceHandle?: string | null;
  targetHandle?: string | null;
}

const handle = (h: string | null | undefined) => h ?? '';
/** Two edges are the same connection when source, target and both handles agree (absent = null = ''). */
export const connectionKey = (e: Omit<GraphEdge, 'id'>) => JSON.stringify([e.source, e.target, handle(e.sourceHandle), handle(e.targetHandle)]);

/** Edges that join two existing, distinct nodes: the ones execution would follow. */
function usableEdges(nodeIds: Set<string>, edges: readonly GraphEdge[]) {
  return edges.filter((e) => e.source !== e.target && nodeIds.has(e.source) && nodeIds.has(e.target));
}

function adjacency(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): Map<string, string[]> {
  const out = new Map<string, string[]>(nodes.map((n) => [n.id, []]));
  for (const e of usableEdges(new Set(out.keys()), edges)) out.get(e.source)!.push(e.target);
  return out;
}

/** DESIGN.md section 5: nodes with `data.startNode: true`; when none has it, nodes without an incoming edge. */
export function startNodeIds(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): string[] {
  const flagged = nodes.filter((n) => (n.data as { startNode?: unknown } | undefined)?.startNode === true).map((n) => n.id);
  if (flagged.length > 0) return flagged;
  const ids = new Set(nodes.map((n) => n.id));
  const withIncoming = new Set(usableEdges(ids, edges).map((e) => e.target));
  return nodes.map((n) => n.id).filter((id) => !withIncoming.has(id));
}

function reachable(out: Map<string, string[]>, from: Iterable<string>): Set<string> {
  const seen = new Set<string>(from);
  const queue = [...seen];
  while (queue.length > 0) for (const next of out.get(queue.shift()!) ?? []) if (!seen.has(next)) (seen.add(next), queue.push(next));
  return seen;
}

/** Shortest path from `from` to `to` (both included) following `out`, or null. */
function pathBetween(out: Map<string, string[]>, from: string, to: string, within?: Set<string>): string[] | null {
  const parent = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const next of out.get(current) ?? []) {
      if (within && !within.has(next)) continue;
      if (next === to) {
        const path = [to, current];
        for (let p = parent.get(current); p; p = parent.get(p)) path.push(p);
        return path.reverse();
      }
      if (!parent.has(next)) (parent.set(next, current), queue.push(next));
    }
  }
  return null;
}

/** Strongly connected components with more than one node (Tarjan, iterative so depth is no issue). */
function cyclicComponents(nodes: readonly GraphNode[], out: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of nodes.map((n) => n.id)) {
    if (index.has(root)) continue;
    const work: Array<{ id: string; next: number }> = [{ id: root, next: 0 }];
    index.set(root, counter), low.set(root, counter++), stack.push(root), onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const successors = out.get(frame.id) ?? [];
      if (frame.next < successors.length) {
        const s = successors[frame.next++];
        if (!index.has(s)) {
          index.set(s, counter), low.set(s, counter++), stack.push(s), onStack.add(s);
          work.push({ id: s, next: 0 });
        } else if (onStack.has(s)) low.set(frame.id, Math.min(low.get(frame.id)!, index.get(s)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].id;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.id)!));
      }
      if (low.get(frame.id) === index.get(frame.id)) {
        const component: string[] = [];
        let member: string;
        do (member = stack.pop()!), onStack.delete(member), component.push(member);
        while (member !== frame.id);
        if (component.length > 1) components.push(component);
      }
    }
  }
  return components;
}

/** One cycle per cyclic component, each listed from its first node in flow order. */
export function findCycles(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): string[][] {
  const out = adjacency(nodes, edges);
  const order = new Map(nodes.map((n, i) => [n.id, i]));
  return cyclicComponents(nodes, out)
    .map((component) => {
      const members = new Set(component);
      const start = component.reduce((a, b) => (order.get(a)! <= order.get(b)! ? a : b));
      // In a strongly connected component a way back to `start` always exists.
      const path = (out.get(start) ?? [])
        .filter((s) => members.has(s))
        .map((s) => (s === start ? [start] : pathBetween(out, s, start, members)))
        .filter((p): p is string[] => p !== null)
        .sort((a, b) => a.length - b.length)[0];
      return [start, ...path.slice(0, -1)];
    })
    .sort((a, b) => order.get(a[0])! - order.get(b[0])!);
}

function danglingProblem(nodeIds: Set<string>, e: GraphEdge): GraphProblem | null {
  const missing = [e.source, e.target].filter((id, i, all) => !nodeIds.has(id) && all.indexOf(id) === i);
  if (missing.length === 0) return null;
  return { code: 'DANGLING_EDGE', message: `connection ${e.id} ends at ${missing.join(' and ')}, which is not a node of this flow`, edgeId: e.id, nodeIds: missing };
}

function selfLoopProblem(e: GraphEdge): GraphProblem | null {
  if (e.source !== e.target) return null;
  return { code: 'SELF_LOOP', message: `connection ${e.id} connects node ${e.source} to itself`, edgeId: e.id, nodeIds: [e.source] };
}

const duplicateProblem = (e: GraphEdge, first: GraphEdge): GraphProblem => ({
  code: 'DUPLICATE_EDGE',
  message: `connection ${e.id} repeats connection ${first.id} (${e.source} → ${e.target}, same handles)`,
  edgeId: e.id,
  duplicateOf: first.id,
  nodeIds: [e.source, e.target],
});

const cycleProblem = (cycle: string[], edgeId?: string): GraphProblem => ({
  code: 'CYCLE',
  message: `flows must be acyclic: ${[...cycle, cycle[0]].join(' → ')}`,
  nodeIds: cycle,
  ...(edgeId !== undefined && { edgeId }),
});

/** The dangling ends, self-loops, duplicates and cycles of a graph, in that order. */
export function structuralProblems(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): GraphProblem[] {
  const nodeIds = new Set(nodes.map((n) => n.id));
  const problems: GraphProblem[] = [];
  for (const e of edges) {
    const p = danglingProblem(nodeIds, e);
    if (p) problems.push(p);
  }
  for (const e of edges) {
    const p = selfLoopProblem(e);
    if (p) problems.push(p);
  }
  const firstByKey = new Map<string, GraphEdge>();
  for (const e of edges) {
    const first = firstByKey.get(connectionKey(e));
    if (first) problems.push(duplicateProblem(e, first));
    else firstByKey.set(connectionKey(e), e);
  }
  for (const cycle of findCycles(nodes, edges)) problems.push(cycleProblem(cycle));
  return problems;
}

/** Every problem of a flow's graph: the structural ones, then unreachable nodes, then condition targets without an edge. */
export function validateGraph(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): GraphProblem[] {
  const problems = structuralProblems(nodes, edges);
  const reached = reachable(adjacency(nodes, edges), startNodeIds(nodes, edges));
  for (const n of nodes) {
    if (!reached.has(n.id)) problems.push({ code: 'UNREACHABLE_NODE', message: `node ${n.id} cannot be reached from any start node`, nodeIds: [n.id] });
  }
  const connected = new Set(edges.map((e) => JSON.stringify([e.source, e.target])));
  for (const n of nodes) {
    const conditions = (n.data as { conditions?: unknown } | undefined)?.conditions;
    if (!Array.isArray(conditions)) continue;
    conditions.forEach((c: unknown, conditionIndex) => {
      const target = (c as { targetNodeId?: unknown } | null)?.targetNodeId;
      if (typeof target !== 'string' || target === '' || connected.has(JSON.stringify([n.id, target]))) return;
      problems.push({
        code: 'CONDITION_TARGET_WITHOUT_EDGE',
        message: `condition ${conditionIndex} of node ${n.id} targets ${target}, but no connection goes from ${n.id} to ${target}`,
        nodeIds: [n.id, target],
        conditionIndex,
      });
    });
  }
  return problems;
}

/**
 * The first structural problem that adding `edge` to a valid graph would create, or null: what the
 * decider checks for each new or changed connection.
 */
export function connectionProblem(nodes: readonly GraphNode[], edges: readonly GraphEdge[], edge: GraphEdge): GraphProblem | null {
  const dangling = danglingProblem(new Set(nodes.map((n) => n.id)), edge);
  if (dangling) return dangling;
  const selfLoop = selfLoopProblem(edge);
  if (selfLoop) return selfLoop;
  const key = connectionKey(edge);
  const first = edges.find((e) => connectionKey(e) === key);
  if (first) return duplicateProblem(edge, first);
  const back = pathBetween(adjacency(nodes, edges), edge.target, edge.source);
  return back ? cycleProblem([edge.source, ...back.slice(0, -1)], edge.id) : null;
}
