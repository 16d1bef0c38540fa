import { z } from 'zod';
import type { EdgeInput, NodeInput, NodeWithId } from './commands.js';
import { connectionShape, type ConnectionInput, type FlowEdge, type FlowNode } from './events.js';
import { structuralProblems } from './graph.js';
import { checkDefinitionSize, graphRejected, limitExceeded, validationFailed } from './guards.js';
import { MAX_EDGES_PER_FLOW, MAX_NODES_PER_FLOW, edgeIdSchema, flowDescriptionSchema, flowNameSchema, nodeIdSchema } from './limits.js';
import type { NodeData } from './node-data.js';
import { issuesToProblems, validateNode, type FieldProblem } from './validate-node.js';

/**
 * Building blocks the deciders share: turning request-shaped nodes and edges into stored ones
 * (known fields only, `data` untouched) and validating a whole definition (create, replace).
 */
export function toNode(id: string, input: NodeInput): FlowNode {
  return { id, type: input.type, position: { x: input.position.x, y: input.position.y }, data: input.data as NodeData };
}

export function toEdge(id: string, c: ConnectionInput): FlowEdge {
  return {
    id,
    source: c.source,
    target: c.target,
    ...(c.sourceHandle !== undefined && { sourceHandle: c.sourceHandle }),
    ...(c.targetHandle !== undefined && { targetHandle: c.targetHandle }),
    ...(c.label !== undefined && { label: c.label }),
    ...(c.data !== undefined && { data: c.data }),
  };
}

const connectionSchema = z.object(connectionShape);
export function connectionProblems(c: unknown, prefix: string): FieldProblem[] {
  const parsed = connectionSchema.safeParse(c);
  return parsed.success ? [] : issuesToProblems(parsed.error.issues, prefix, c);
}

export function idProblems(id: unknown, field: string, kind: 'node' | 'edge'): FieldProblem[] {
  const parsed = (kind === 'node' ? nodeIdSchema : edgeIdSchema).safeParse(id);
  return parsed.success ? [] : issuesToProblems(parsed.error.issues, field);
}

export function nameProblems(name: unknown, description: unknown): { problems: FieldProblem[]; name: string; description: string } {
  const problems: FieldProblem[] = [];
  const n = flowNameSchema.safeParse(name);
  if (!n.success) problems.push(...issuesToProblems(n.error.issues, 'body.name'));
  const d = flowDescriptionSchema.safeParse(description ?? '');
  if (!d.success) problems.push(...issuesToProblems(d.error.issues, 'body.description'));
  return { problems, name: n.success ? n.data : '', description: d.success ? d.data : '' };
}

/**
 * Validates a whole graph as a request gives it (fields named `body.nodes.3.data.prompt`) and
 * returns it normalized. Order of refusal: counts, fields (all at once), size, structure.
 */
export function buildDefinition(
  nodes: NodeWithId[],
  edges: EdgeInput[],
  extraProblems: FieldProblem[] = [],
): { nodes: FlowNode[]; edges: FlowEdge[] } {
  if (nodes.length > MAX_NODES_PER_FLOW) throw limitExceeded('nodesPerFlow', MAX_NODES_PER_FLOW, nodes.length);
  if (edges.length > MAX_EDGES_PER_FLOW) throw limitExceeded('edgesPerFlow', MAX_EDGES_PER_FLOW, edges.length);
  const problems = [...extraProblems];
  const nodeIds = nodes.map((n) => n.id);
  const seenNodes = new Set<string>();
  nodes.forEach((node, i) => {
    problems.push(...idProblems(node.id, `body.nodes.${i}.id`, 'node'));
    if (seenNodes.has(node.id)) problems.push({ field: `body.nodes.${i}.id`, message: `duplicate node id ${node.id}` });
    seenNodes.add(node.id);
    for (const p of validateNode(node, { nodeIds, selfId: node.id })) problems.push({ field: `body.nodes.${i}.${p.field}`.replace(/\.$/, ''), message: p.message });
  });
  const seenEdges = new Set<string>();
  edges.forEach((edge, i) => {
    problems.push(...idProblems(edge.id, `body.edges.${i}.id`, 'edge'));
    if (seenEdges.has(edge.id)) problems.push({ field: `body.edges.${i}.id`, message: `duplicate connection id ${edge.id}` });
    seenEdges.add(edge.id);
    problems.push(...connectionProblems(edge, `body.edges.${i}`));
  });
  if (problems.length > 0) throw validationFailed(problems);
  const built = { nodes: nodes.map((n) => toNode(n.id, n)), edges: edges.map((e) => toEdge(e.id, e)) };
  checkDefinitionSize(built.nodes, built.edges, true);
  const structural = structuralProblems(built.nodes, built.edges);
  if (structural.length > 0) throw graphRejected(structural);
  return built;
}
