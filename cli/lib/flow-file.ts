import { readFileSync } from 'node:fs';
import { ApiClient, ApiError, type RequestBody } from './api.js';
import { CliError, EXIT, usageError } from './errors.js';

/** A flow as files carry it and a replace accepts it: nodes `{id, type, position, data}`, edges `{id, source, target, …}`. */
export interface PortableFlow {
  name: string;
  description: string | null;
  nodes: unknown[];
  edges: unknown[];
}

/** Only what a replace accepts (a `flows get` answer carries more: version, trigger, timestamps). */
export function portable(flow: { name: string; description?: string | null; nodes: any[]; edges: any[] }): PortableFlow {
  return {
    name: flow.name,
    description: flow.description ?? null,
    nodes: flow.nodes.map((n) => ({ id: n.id, type: n.type, position: n.position, data: n.data })),
    edges: flow.edges.map((e) => {
      const edge: Record<string, unknown> = { id: e.id, source: e.source, target: e.target };
      for (const key of ['sourceHandle', 'targetHandle', 'label', 'data']) if (e[key] !== undefined) edge[key] = e[key];
      return edge;
    }),
  };
}

/** A JSON file ("-": standard input) as a value; unreadable or not JSON is a usage error (exit 2). */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${path}: ${(err as Error).message}`);
  }
  // JSON only: no YAML parser is among flowctl's runtime dependencies (see NOTES-36e.md).
  if (/\.ya?ml$/i.test(path)) throw usageError(`${path}: YAML is not supported, write the flow as JSON`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usageError(`${path} is not JSON: ${(err as Error).message}`);
  }
}

/**
 * Accepts our export file, a `flows get --json` answer, or a bare flow object. With `graphOptional`
 * (flows create --file) a file may give only `{name, description}`: the flow starts empty.
 */
export function readFlowFile(path: string, options: { graphOptional?: boolean } = {}): PortableFlow {
  const doc: any = readJsonFile(path);
  const flow = doc?.format === 'flowctl.flow' ? doc.flow : (doc?.flow ?? doc);
  const graphOk = (v: unknown) => Array.isArray(v) || (options.graphOptional && v === undefined);
  if (!flow || typeof flow !== 'object' || typeof flow.name !== 'string' || !graphOk(flow.nodes) || !graphOk(flow.edges)) {
    throw usageError(`${path} is not a flow: expected {name, nodes: [], edges: []} (as flowctl flows export writes it)`);
  }
  return portable({ ...flow, nodes: flow.nodes ?? [], edges: flow.edges ?? [] });
}

/**
 * Creates a flow and, when it has a graph, replaces it with the graph: all or nothing, so a graph
 * the service refuses leaves no empty flow behind (a 400 is the file's fault: exit 2).
 */
export async function createFlowWithGraph(api: ApiClient, flow: PortableFlow, source: string): Promise<{ flowId: string; version: number }> {
  const described = flow.description ? { description: flow.description } : {};
  const created = await api.data(api.client.POST('/flows', { body: { name: flow.name, ...described } }));
  const flowId = created.flow.id;
  if (flow.nodes.length === 0 && flow.edges.length === 0) return { flowId, version: created.flow.version };
  try {
    const replaced = await api.data(
      api.client.PUT('/flows/{flowId}', {
        params: { path: { flowId } },
        body: { name: flow.name, ...described, nodes: flow.nodes, edges: flow.edges } as RequestBody<'replaceFlow'>, // the service validates the graph
      }),
    );
    return { flowId, version: replaced.flow.version };
  } catch (err) {
    await api.client.DELETE('/flows/{flowId}', { params: { path: { flowId } } }).catch(() => undefined);
    if (err instanceof ApiError && err.status === 400) throw new CliError(`the service refused the flow in ${source}: ${err.message}`, EXIT.USAGE, err.code, err.details);
    throw err;
  }
}
