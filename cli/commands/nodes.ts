import type { Command } from 'commander';
import type { ApiClient, RequestBody } from '../lib/api.js';
import { contextOf } from '../lib/context.js';
import { CliError, EXIT } from '../lib/errors.js';
import { nodeBodyOf, parsePosition, type NodeFlags } from '../lib/node-body.js';
import { table } from '../lib/output.js';

/**
 * `flowctl nodes …`: one node of a flow at a time, through the node routes (`POST /flows/{id}/nodes`,
 * `PUT …/nodes/{nodeId}` which merges `data` key by key, `DELETE`). The service validates each
 * node type's fields: its 400 names the field and exits 2.
 */

type NodeView = { id: string; type: string; position: { x: number; y: number }; data: Record<string, any> };

/** Every node of the flow (the list is paged by 100 at most). */
async function allNodes(api: ApiClient, flowId: string): Promise<NodeView[]> {
  const nodes: NodeView[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.data(api.client.GET('/flows/{flowId}/nodes', { params: { path: { flowId }, query: { limit: 100, cursor } } }));
    nodes.push(...(page.items as NodeView[]));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return nodes;
}

const describeNode = (n: NodeView) => `${n.id}  ${n.data?.nodeType ?? n.type}${n.data?.label ? `  "${n.data.label}"` : ''}`;

/** The options both `add` and `edit` take. */
function nodeOptions(command: Command): Command {
  return command
    .option('--type <nodeType>', "the node type (data.nodeType): llm, transform, webhook, condition, … (the service's GET /node-types lists them)")
    .option('--data <json>', "the node's data as a JSON object")
    .option('--file <file>', "a JSON file: the node's data, or a whole node {type, position, data}")
    .option('--label <text>', 'the label shown on the canvas')
    .option('--prompt <template>', 'llm: the prompt template ({{inputs.x}}, {{previous}}, {{nodes.<id>.output}})')
    .option('--model <model>', 'llm: the model')
    .option('--provider <provider>', 'llm: the provider (data.llm), e.g. openai, anthropic, offline')
    .option('--template <template>', 'transform: the output template')
    // Not --url: that is the global option naming the service, which commander reads anywhere on the line.
    .option('--webhook-url <url>', 'webhook: the URL to call (webhookConfig.url)')
    .option('--position <x,y>', 'where it sits on the canvas', parsePosition);
}

export function registerNodeCommands(program: Command) {
  const nodes = program.command('nodes').description('list, add, edit and remove the nodes of a flow');

  nodes
    .command('list <flowId>')
    .description('the nodes of a flow, in the order they were added')
    .action(async (flowId: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const items = await allNodes(api, flowId);
      out.result({ items }, () =>
        items.length === 0
          ? 'No nodes.'
          : table(
              ['ID', 'TYPE', 'LABEL', 'POSITION'],
              items.map((n) => [n.id, String(n.data?.nodeType ?? n.type), String(n.data?.label ?? ''), `${n.position.x},${n.position.y}`]),
            ),
      );
    });

  nodeOptions(
    nodes
      .command('add <flowId>')
      .description('add a node: --type with convenience flags (--prompt …), or --data/--file')
      .option('--id <nodeId>', 'the id to give it (default: the service makes one)'),
  ).action(async (flowId: string, options: NodeFlags & { id?: string }, command: Command) => {
    const { api, out } = contextOf(command);
    const body = nodeBodyOf(options);
    if (body.data.nodeType === undefined) throw new CliError('nodes add needs --type (or a nodeType in --data/--file)', EXIT.USAGE, 'USAGE');
    // Without --position the node goes to the right of the others, as a person would place it.
    const position = body.position ?? { x: Math.max(-200, ...(await allNodes(api, flowId)).map((n) => n.position.x)) + 200, y: 0 };
    const { node } = await api.data(
      api.client.POST('/flows/{flowId}/nodes', {
        params: { path: { flowId } },
        body: { ...(options.id ? { id: options.id } : {}), type: body.type ?? 'custom', position, data: body.data } as RequestBody<'addNode'>,
      }),
    );
    out.result({ flowId, node }, () => `Added node ${describeNode(node as NodeView)} to ${flowId}.`);
  });

  nodeOptions(
    nodes.command('edit <flowId> <nodeId>').description("change a node: --data/--file and the flags are merged into its data key by key; --position moves it"),
  ).action(async (flowId: string, nodeId: string, options: NodeFlags, command: Command) => {
    const { api, out } = contextOf(command);
    // The current node: its type decides which convenience flags fit, and nested fields are merged onto it.
    const current = (await allNodes(api, flowId)).find((n) => n.id === nodeId);
    if (!current) throw new CliError(`node ${nodeId} not found in flow ${flowId}`, EXIT.NOT_FOUND, 'NODE_NOT_FOUND');
    const body = nodeBodyOf(options, current.data);
    if (Object.keys(body.data).length === 0 && !body.position && !body.type) throw new CliError('nodes edit: nothing to change (give --data, --file, --position or a flag)', EXIT.USAGE, 'USAGE');
    const { node } = await api.data(
      api.client.PUT('/flows/{flowId}/nodes/{nodeId}', { params: { path: { flowId, nodeId } }, body: body as RequestBody<'updateNode'> }),
    );
    out.result({ flowId, node }, () => `Updated node ${describeNode(node as NodeView)}.`);
  });

  nodes
    .command('rm <flowId> <nodeId>')
    .description('remove a node with its connections')
    .action(async (flowId: string, nodeId: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const reply = await api.data(api.client.DELETE('/flows/{flowId}/nodes/{nodeId}', { params: { path: { flowId, nodeId } } }));
      out.result({ flowId, nodeId, removedConnectionIds: reply.removedConnectionIds, updatedNodeIds: reply.updatedNodeIds }, () =>
        `Removed node ${nodeId}${reply.removedConnectionIds.length ? ` and its connections ${reply.removedConnectionIds.join(', ')}` : ''}.`,
      );
    });
}
