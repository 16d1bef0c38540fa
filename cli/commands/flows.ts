import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { contextOf } from '../lib/context.js';
import { usageError } from '../lib/errors.js';
import { createFlowWithGraph, portable, readFlowFile } from '../lib/flow-file.js';
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

/** Registers `flows list|get|export|import`; answers the `flows` command, which other files extend. */
export function registerFlowCommands(program: Command): Command {
  const flows = program.command('flows').description('list, show, create, rename, delete, export and import flows');

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
      const { flowId, version } = await createFlowWithGraph(api, { ...flow, name }, file);
      out.result({ flowId, name, version, nodes: flow.nodes.length, edges: flow.edges.length }, () =>
        `Imported "${name}" as ${flowId} (${plural(flow.nodes.length, 'node')}, ${plural(flow.edges.length, 'connection')}).`,
      );
    });
  return flows;
}

export function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw usageError(`${flag} must be a positive whole number, not ${value}`);
  return n;
}
