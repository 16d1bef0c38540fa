import type { Edge, Node } from '@xyflow/react';
import type { ApiEdge, ApiNode, Flow, JsonSchema, NodeTypeInfo } from './api';

/**
 * The canvas keeps React Flow's nodes and edges; the API keeps {id, type, position, data}. These
 * turn one into the other. A node's `data` is the API's `data` as is (every field the service
 * keeps survives a round trip); the API's renderer `type` is kept apart so the canvas can draw
 * every node with its own component and still save the type it was given.
 */
export type CanvasNode = Node<Record<string, unknown>, 'flow'>;
export type CanvasEdge = Edge;

export interface Graph {
  nodes: CanvasNode[];
  edges: CanvasEdge[];
  /** node id → the API's renderer type (`custom` for nodes made here). */
  rendererTypes: Record<string, string>;
}

export function graphOf(flow: Pick<Flow, 'nodes' | 'edges'>): Graph {
  const rendererTypes: Record<string, string> = {};
  const nodes = flow.nodes.map((n: ApiNode): CanvasNode => {
    rendererTypes[n.id] = n.type;
    return { id: n.id, type: 'flow', position: { x: n.position.x, y: n.position.y }, data: { ...(n.data as Record<string, unknown>) } };
  });
  const edges = flow.edges.map(
    (e: ApiEdge): CanvasEdge => ({
      id: e.id,
      source: e.source,
      target: e.target,
      sourceHandle: e.sourceHandle ?? null,
      targetHandle: e.targetHandle ?? null,
      ...(e.label ? { label: e.label } : {}),
      ...(e.data ? { data: e.data } : {}),
    }),
  );
  return { nodes, edges, rendererTypes };
}

/** The body of `PUT /flows/{flowId}`: only the fields the API takes (React Flow adds its own). */
export function definitionOf(graph: Graph) {
  return {
    nodes: graph.nodes.map((n) => ({ id: n.id, type: graph.rendererTypes[n.id] ?? 'custom', position: { x: n.position.x, y: n.position.y }, data: n.data })),
    edges: graph.edges.map((e) => ({
      id: e.id,
      source: e.source,
      target: e.target,
      ...(e.sourceHandle ? { sourceHandle: e.sourceHandle } : {}),
      ...(e.targetHandle ? { targetHandle: e.targetHandle } : {}),
      ...(typeof e.label === 'string' && e.label ? { label: e.label } : {}),
      ...(e.data ? { data: e.data } : {}),
    })),
  };
}

/** An id the API accepts (`^[A-Za-z0-9][A-Za-z0-9_:-]*$`), unique enough within one flow. */
export function newId(prefix: string): string {
  return `${prefix.replace(/[^A-Za-z0-9_-]/g, '')}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * Starting data for a node dropped from the palette: the type, a readable name, and a value for
 * each required setting so the flow saves at once where a sensible value exists ({{previous}}
 * for templates, an enum's first choice); the others stay empty for the person to fill in.
 */
export function initialData(type: NodeTypeInfo, existing: number): Record<string, unknown> {
  const data: Record<string, unknown> = { nodeType: type.nodeType, agentName: `${type.label} ${existing + 1}` };
  const props = type.dataSchema.properties ?? {};
  for (const key of type.dataSchema.required ?? []) {
    const schema = props[key] ?? {};
    if (schema.enum?.length) data[key] = schema.enum[0];
    else if (schema.type === 'string') data[key] = /template|prompt/i.test(key) ? '{{previous}}' : '';
    else if (schema.type === 'integer' || schema.type === 'number') data[key] = schema.minimum ?? 0;
    else if (schema.type === 'array') data[key] = [];
    else if (schema.type === 'object') data[key] = {};
  }
  return data;
}

/** The settings worth a field of their own: the type's required ones and those only some types have. */
export function settingsOf(type: NodeTypeInfo, common: Set<string>): Array<[string, JsonSchema]> {
  const required = new Set(type.dataSchema.required ?? []);
  return Object.entries(type.dataSchema.properties ?? {}).filter(([key]) => key !== 'nodeType' && key !== 'agentName' && (required.has(key) || !common.has(key)));
}

/** The data keys every node type has (the shared shape): the form leaves them to the JSON editor. */
export function commonKeys(types: NodeTypeInfo[]): Set<string> {
  const [first, ...rest] = types.map((t) => new Set(Object.keys(t.dataSchema.properties ?? {})));
  if (!first) return new Set();
  return new Set([...first].filter((k) => rest.every((s) => s.has(k))));
}

export function labelOf(node: CanvasNode, types: Map<string, NodeTypeInfo>): string {
  const name = node.data.agentName;
  if (typeof name === 'string' && name.trim()) return name;
  const type = types.get(String(node.data.nodeType));
  return type?.label ?? node.id;
}
