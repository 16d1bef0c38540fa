import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ApiError, type RequestBody } from '../lib/api.js';
import { contextOf } from '../lib/context.js';
import { CliError, EXIT, usageError } from '../lib/errors.js';
import { plural, table } from '../lib/output.js';

/** The file `flows export` writes and `flows import` reads. */
export interface FlowExport {
  format: 'flowctl.flow';
  version: 1;
  exportedAt: string;
  source: { url: string; flowId: string; version: number };
  flow: { name: string; description: string | null; nodes: unknown[]; edges: unknown[] };
}

type FlowView = { id: string; name: string; description: string | null; version: number; archived?: boolean; updatedAt?: string; nodes: any[]; edges: any[] };

/** Only what a replace accepts: nodes `{id, type, position, data}`, edges `{id, source, target, …}`. */
function portable(flow: { name: string; description?: string | null; nodes: any[]; edges: any[] }) {
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

/** Accepts our export file, a `flows get --json` answer, or a bare flow object. */
function readFlowFile(path: string) {
  let text: string;
  try {
    text = path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${path}: ${(err as Error).message}`);
  }
  let doc: any;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw usageError(`${path} is not JSON: ${(err as Error).message}`);
  }
  const flow = doc?.format === 'flowctl.flow' ? doc.flow : (doc?.flow ?? doc);
  if (!flow || typeof flow !== 'object' || typeof flow.name !== 'string' || !Array.isArray(flow.nodes) || !Array.isArray(flow.edges)) {
    throw usageError(`${path} is not a flow: expected {name, nodes: [], edges: []} (as flowctl flows export writes it)`);
  }
  return portable(flow);
}

export function registerFlowCommands(program: Command) {
  const flows = program.command('flows').description('list, show, export and import flows');

  flows
    .command('list')
    .description('your flows in the active workspace, most recently updated first')
    .option('--archived', 'only archived flows')
    .option('--active', 'only flows that are not archived')
    .option('--limit <n>', 'at most this many', (v) => positiveInt(v, '--limit'), 100)
    .action(async (options: { archived?: boolean; active?: boolean; limit: number }, command: Command) => {
      const { api, out } = contextOf(command);
      const items: any[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.data(
          api.client.GET('/flows', {
            params: { query: { limit: Math.min(100, options.limit - items.length), cursor, archived: options.archived ? 'true' : options.active ? 'false' : undefined } },
          }),
        );
        items.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor && items.length < options.limit);
      out.result({ items }, () =>
        items.length === 0
          ? 'No flows.'
          : table(
              ['ID', 'NAME', 'NODES', 'VERSION', 'UPDATED'],
              items.map((f) => [f.id, f.archived ? `${f.name} (archived)` : f.name, String(f.nodeCount ?? ''), String(f.version), String(f.updatedAt ?? '').slice(0, 19).replace('T', ' ')]),
            ),
      );
    });

  flows
    .command('get <flowId>')
    .description('show a flow with its nodes and connections')
    .action(async (flowId: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const { flow } = (await api.data(api.client.GET('/flows/{flowId}', { params: { path: { flowId } } }))) as { flow: FlowView };
      out.result({ flow }, () => [
        `${flow.name}  (${flow.id}, version ${flow.version}${flow.archived ? ', archived' : ''})`,
        ...(flow.description ? [flow.description] : []),
        `${plural(flow.nodes.length, 'node')}, ${plural(flow.edges.length, 'connection')}`,
        ...flow.nodes.map((n) => `  node ${n.id}  ${n.data?.nodeType ?? n.type}${n.data?.label ? `  "${n.data.label}"` : ''}`),
        ...flow.edges.map((e) => `  edge ${e.source} → ${e.target}${e.label ? `  (${e.label})` : ''}`),
      ]);
    });

  flows
    .command('export <flowId>')
    .description('write a flow to a JSON file (secrets stay masked: the service never shows them)')
    .option('-o, --output <file>', 'the file to write (default: standard output)')
    .action(async (flowId: string, options: { output?: string }, command: Command) => {
      const { url, api, out } = contextOf(command);
      const { flow } = (await api.data(api.client.GET('/flows/{flowId}', { params: { path: { flowId } } }))) as { flow: FlowView };
      const doc: FlowExport = { format: 'flowctl.flow', version: 1, exportedAt: new Date().toISOString(), source: { url, flowId: flow.id, version: flow.version }, flow: portable(flow) };
      const text = `${JSON.stringify(doc, null, 2)}\n`;
      if (!options.output || options.output === '-') {
        process.stdout.write(text);
        return;
      }
      writeFileSync(options.output, text);
      out.result({ flowId: flow.id, file: options.output, nodes: flow.nodes.length, edges: flow.edges.length }, () =>
        `Exported "${flow.name}" (${plural(flow.nodes.length, 'node')}, ${plural(flow.edges.length, 'connection')}) to ${options.output}.`,
      );
    });

  flows
    .command('import <file>')
    .description('create a new flow from a JSON file written by flows export ("-" reads standard input)')
    .option('--name <name>', 'name the new flow differently')
    .action(async (file: string, options: { name?: string }, command: Command) => {
      const { api, out } = contextOf(command);
      const flow = readFlowFile(file);
      const name = options.name ?? flow.name;
      const created = await api.data(api.client.POST('/flows', { body: { name, ...(flow.description ? { description: flow.description } : {}) } }));
      const flowId = created.flow.id;
      let replaced: { flow: FlowView };
      try {
        replaced = (await api.data(
          api.client.PUT('/flows/{flowId}', {
            params: { path: { flowId } },
            body: { name, ...(flow.description ? { description: flow.description } : {}), nodes: flow.nodes, edges: flow.edges } as RequestBody<'replaceFlow'>, // the file's graph: the service validates it (400 → exit 2)
          }),
        )) as { flow: FlowView };
      } catch (err) {
        // All or nothing: the empty flow just created goes away again.
        await api.client.DELETE('/flows/{flowId}', { params: { path: { flowId } } }).catch(() => undefined);
        if (err instanceof ApiError && err.status === 400) throw new CliError(`the service refused the flow in ${file}: ${err.message}`, EXIT.USAGE, err.code, err.details);
        throw err;
      }
      out.result({ flowId, name, version: replaced.flow.version, nodes: flow.nodes.length, edges: flow.edges.length }, () =>
        `Imported "${name}" as ${flowId} (${plural(flow.nodes.length, 'node')}, ${plural(flow.edges.length, 'connection')}).`,
      );
    });
}

export function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw usageError(`${flag} must be a positive whole number, not ${value}`);
  return n;
}
