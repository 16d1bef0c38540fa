import type { Command } from 'commander';
import { contextOf } from '../lib/context.js';
import { table } from '../lib/output.js';

/**
 * `flowctl connections …`: the edges of a flow. The service refuses a connection that would dangle,
 * loop on itself, repeat another or close a cycle (400 with its code: exit 2).
 */

type Edge = { id: string; source: string; target: string; sourceHandle?: string | null; targetHandle?: string | null; label?: string | null };

export function registerConnectionCommands(program: Command) {
  const connections = program.command('connections').description('list, add and remove the connections between the nodes of a flow');

  connections
    .command('list <flowId>')
    .description('the connections of a flow, in the order they were added')
    .action(async (flowId: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const items: Edge[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.data(api.client.GET('/flows/{flowId}/connections', { params: { path: { flowId }, query: { limit: 100, cursor } } }));
        items.push(...(page.items as Edge[]));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      out.result({ items }, () =>
        items.length === 0 ? 'No connections.' : table(['ID', 'SOURCE', 'TARGET', 'LABEL'], items.map((e) => [e.id, handle(e.source, e.sourceHandle), handle(e.target, e.targetHandle), e.label ?? ''])),
      );
    });

  connections
    .command('add <flowId> <source> <target>')
    .description('connect node <source> to node <target>')
    .option('--label <text>', "the connection's label")
    .option('--source-handle <handle>', 'the output handle of the source (e.g. a condition branch)')
    .option('--target-handle <handle>', 'the input handle of the target')
    .action(async (flowId: string, source: string, target: string, options: { label?: string; sourceHandle?: string; targetHandle?: string }, command: Command) => {
      const { api, out } = contextOf(command);
      const { connection } = await api.data(api.client.POST('/flows/{flowId}/connections', { params: { path: { flowId } }, body: { source, target, ...options } }));
      out.result({ flowId, connection }, () => `Connected ${source} → ${target} (${connection.id}).`);
    });

  connections
    .command('rm <flowId> <connectionId>')
    .description('remove a connection')
    .action(async (flowId: string, connectionId: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      await api.data(api.client.DELETE('/flows/{flowId}/connections/{connectionId}', { params: { path: { flowId, connectionId } } }));
      out.result({ flowId, connectionId, deleted: true }, () => `Removed connection ${connectionId}.`);
    });
}

const handle = (node: string, h: string | null | undefined) => (h ? `${node}:${h}` : node);
