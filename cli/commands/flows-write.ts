import type { Command } from 'commander';
import { contextOf } from '../lib/context.js';
import { usageError } from '../lib/errors.js';
import { createFlowWithGraph, readFlowFile } from '../lib/flow-file.js';
import { plural } from '../lib/output.js';

/**
 * `flows create|rename|delete`: the writes on a whole flow. Nodes, connections and the trigger have
 * their own commands (nodes.ts, connections.ts, trigger.ts), each one API route per command.
 */
export function registerFlowWriteCommands(flows: Command) {
  flows
    .command('create')
    .description('create a flow: empty (--name) or from a JSON file with its nodes and connections (--file; "-" reads standard input)')
    .option('--name <name>', "the flow's name (with --file: instead of the file's)")
    .option('--description <text>', 'what the flow is for')
    .option('--file <file>', 'a flow file: {name, description?, nodes?, edges?}, a flows export file or a flows get --json answer (JSON only)')
    .action(async (options: { name?: string; description?: string; file?: string }, command: Command) => {
      const { api, out } = contextOf(command);
      if (!options.file && !options.name) throw usageError('flows create needs --name <name> or --file <file>');
      const fromFile = options.file ? readFlowFile(options.file, { graphOptional: true }) : { name: '', description: null, nodes: [], edges: [] };
      const flow = { ...fromFile, name: options.name ?? fromFile.name, description: options.description ?? fromFile.description };
      const { flowId, version } = await createFlowWithGraph(api, flow, options.file ?? '--name');
      out.result({ flowId, name: flow.name, description: flow.description, version, nodes: flow.nodes.length, edges: flow.edges.length }, () =>
        `Created "${flow.name}" as ${flowId} (${plural(flow.nodes.length, 'node')}, ${plural(flow.edges.length, 'connection')}).`,
      );
    });

  flows
    .command('rename <flowId> <name>')
    .description('give a flow a new name')
    .action(async (flowId: string, name: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const { flow } = await api.data(api.client.PATCH('/flows/{flowId}/name', { params: { path: { flowId } }, body: { name } }));
      out.result({ flowId, name: flow.name, version: flow.version }, () => `Renamed ${flowId} to "${flow.name}" (version ${flow.version}).`);
    });

  flows
    .command('delete <flowId>')
    .description('delete a flow (its history stays as the audit trail; the id is never reused)')
    .action(async (flowId: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      await api.data(api.client.DELETE('/flows/{flowId}', { params: { path: { flowId } } }));
      out.result({ flowId, deleted: true }, () => `Deleted flow ${flowId}.`);
    });
}
