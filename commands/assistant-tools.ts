import { randomUUID } from 'node:crypto';
import { assistantActorId, type ConversationScope } from '../domain/assistant/index.js';
import { nodeTypeCatalogue, toFlowView } from '../domain/flows/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { AssistantReads } from '../ports/assistant.js';
import type { EventStore } from '../ports/event-store.js';
import type { SecretSealer } from '../ports/secret-sealer.js';
import type { AgentTool } from './agents-loop.js';
import { writeUserFlow, type FlowWriteCommand } from './flows.js';
import type { CommandContext } from './handle.js';

/**
 * The assistant's own tools: read the user's flows, runs and node types, explain a failed run, and
 * create or change a flow through the same commands and validators as the editor
 * (commands/flows.ts writeUserFlow, in the user's scope). Every change is an ordinary flow event
 * whose `actorId` is `assistant:<userId>` and whose `causationId` is the assistant message that
 * made it, so `GET /flows/{id}/audit` shows the assistant did it. A refused change comes back to the
 * model as an error result with the validator's message and details, so it can correct itself.
 */
export interface AssistantToolPorts {
  eventStore: EventStore;
  reads: AssistantReads;
  sealer: Pick<SecretSealer, 'seal'>;
  now(): Date;
}

export interface AssistantToolContext {
  scope: ConversationScope;
  /** The request's metadata (correlation, request id); the actor becomes the assistant. */
  command: CommandContext;
  /** The assistant message whose generation runs the tools (the causation of its changes). */
  replyId: string;
  /** Called after each flow change with where the flow stands, so the answer can wait for its read model. */
  onFlowChanged?(flowId: string, position: number | null): void;
}

const LIST_LIMIT = 50;
const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required, additionalProperties: false });
const str = (description: string) => ({ type: 'string', description });

const nodeSchema = obj(
  {
    id: str('optional node id (letters, digits, _ or -); generated when absent'),
    nodeType: str('the behaviour: llm, transform, condition, webhook, input, output, … (see list_node_types)'),
    data: { type: 'object', description: "the node's data for its nodeType (see list_node_types with nodeType for its schema)" },
    position: obj({ x: { type: 'number' }, y: { type: 'number' } }, ['x', 'y']),
  },
  ['nodeType'],
);
const edgeSchema = obj({ source: str('source node id'), target: str('target node id'), label: str('optional label') }, ['source', 'target']);

/** A refusal the model can act on: code, message and the validator's details. */
function refusal(err: unknown): never {
  if (err instanceof DomainError) {
    throw new Error(JSON.stringify({ error: err.code, message: err.message, ...(err.details !== undefined && { details: err.details }) }));
  }
  throw err;
}

function nodeInput(node: Record<string, unknown>, index: number) {
  const data = { ...((node.data as Record<string, unknown> | undefined) ?? {}), nodeType: node.nodeType };
  const position = (node.position as { x: number; y: number } | undefined) ?? { x: index * 250, y: 0 };
  return { type: 'custom', position, data };
}

/** What a run's failure means and what to try, by the error codes the run engine records. */
export function explainRunError(code: string): string {
  if (code.startsWith('WEBHOOK_HTTP_')) return `the webhook answered HTTP ${code.slice('WEBHOOK_HTTP_'.length)}: check the URL, method, headers and body of webhookConfig, and the receiving service`;
  if (code.startsWith('OUTBOUND_')) return 'the outbound HTTP rule refused or could not reach the address (private or loopback addresses are refused unless configured); use a public URL';
  const hints: Record<string, string> = {
    LLM_PROVIDER_MISSING: 'the llm node names no provider: set data.llm (openai, anthropic, google, openai_compatible or offline)',
    LLM_PROVIDER_UNKNOWN: 'data.llm names an unknown provider',
    LLM_MODEL_MISSING: 'the llm node names no model: set data.model',
    PROVIDER_NOT_CONFIGURED: "no credentials for this provider: add the organization's or your own provider key (LLM credentials), or use the offline provider",
    PROVIDER_ERROR: 'the model provider answered with an error; check the model name and the credentials',
    PROVIDER_TIMEOUT: 'the model took too long; try again, use a faster model, or lower maxTokens',
    PROVIDER_RATE_LIMITED: 'the provider rate-limited the call; try again later',
    BUDGET_EXCEEDED: "the organization's monthly LLM budget is spent; raise it in the organization settings",
    NODE_TIMEOUT: 'the node ran longer than NODE_TIMEOUT_MS',
    RUN_TIMEOUT: 'the whole run ran longer than RUN_TIMEOUT_MS',
    CONDITION_NEEDS_MODEL: 'a usePrompt condition needs the node to name an LLM provider (data.llm)',
    OUTPUT_TOO_LARGE: "the node's output was larger than a run keeps; make it smaller (a transform can pick fields)",
  };
  return hints[code] ?? 'see the error message; fix the node data it names and run again';
}

export function assistantTools(ports: AssistantToolPorts, ctx: AssistantToolContext): AgentTool[] {
  const { reads, eventStore } = ports;
  const scope = ctx.scope;
  const writeContext = (): CommandContext => ({ ...ctx.command, actorId: assistantActorId(scope.userId), causationId: ctx.replyId, now: ports.now() });

  async function write(flowId: string, command: FlowWriteCommand) {
    try {
      const { result, position } = await writeUserFlow(eventStore, writeContext(), flowId, command, { scope, sealer: ports.sealer });
      ctx.onFlowChanged?.(flowId, position);
      return result.state.deleted ? { flowId, deleted: true } : { flow: toFlowView(result.state), events: result.events.map((e) => e.type) };
    } catch (err) {
      refusal(err);
    }
  }

  async function explain(processId: string) {
    const run = await reads.getRun(scope, processId);
    if (!run) throw new Error(`no run ${processId} in this workspace`);
    const nodes = (run.nodes as Array<{ nodeId: string; nodeType: string | null; status: string; error: { code?: string; message?: string } | null; skipReason: string | null }>) ?? [];
    const failed = nodes.filter((n) => n.status === 'failed');
    const runError = run.error as { code?: string; message?: string } | null;
    return {
      processId,
      flowId: run.flowId,
      status: run.status,
      runError,
      failedNodes: failed.map((n) => ({ nodeId: n.nodeId, nodeType: n.nodeType, error: n.error, hint: explainRunError(n.error?.code ?? '') })),
      skippedNodes: nodes.filter((n) => n.status === 'skipped').map((n) => ({ nodeId: n.nodeId, reason: n.skipReason })),
      summary:
        run.status === 'failed'
          ? `The run failed${failed.length ? ` at ${failed.map((n) => `${n.nodeId} (${n.nodeType ?? 'node'}): ${n.error?.code ?? 'error'} ${n.error?.message ?? ''}`.trim()).join('; ')}` : runError ? `: ${runError.code ?? ''} ${runError.message ?? ''}` : ''}.`
          : `The run is ${String(run.status)}; nothing failed.`,
    };
  }

  return [
    { name: 'list_flows', description: "List the user's flows in this workspace (newest first).", inputSchema: obj({}), run: async () => reads.listFlows(scope, LIST_LIMIT) },
    {
      name: 'get_flow',
      description: 'Read one flow with its nodes and edges.',
      inputSchema: obj({ flowId: str('the flow id') }, ['flowId']),
      run: async (input) => (await reads.getFlow(scope, String(input.flowId))) ?? Promise.reject(new Error(`no flow ${String(input.flowId)} in this workspace`)),
    },
    {
      name: 'list_runs',
      description: "List recent runs (newest first), of one flow or of the whole workspace.",
      inputSchema: obj({ flowId: str('optional: only this flow') }),
      run: async (input) => reads.listRuns(scope, typeof input.flowId === 'string' && input.flowId ? input.flowId : null, 20),
    },
    {
      name: 'get_run',
      description: "Read one run: its status, each node's status, output, error and timing.",
      inputSchema: obj({ processId: str('the run (process) id') }, ['processId']),
      run: async (input) => (await reads.getRun(scope, String(input.processId))) ?? Promise.reject(new Error(`no run ${String(input.processId)} in this workspace`)),
    },
    {
      name: 'explain_run',
      description: 'Explain why a run failed: the failed nodes, their errors and what to change.',
      inputSchema: obj({ processId: str('the run (process) id') }, ['processId']),
      run: async (input) => explain(String(input.processId)),
    },
    {
      name: 'list_node_types',
      description: 'List the node types a flow can use; with nodeType, that type with the JSON Schema of its data.',
      inputSchema: obj({ nodeType: str('optional: one node type, to get its data schema') }),
      run: async (input) => {
        const all = nodeTypeCatalogue();
        if (typeof input.nodeType === 'string' && input.nodeType) {
          const one = all.find((t) => t.nodeType === input.nodeType);
          if (!one) throw new Error(`unknown node type ${input.nodeType}; known: ${all.map((t) => t.nodeType).join(', ')}`);
          return one;
        }
        return all.map(({ nodeType, label, description }) => ({ nodeType, label, description }));
      },
    },
    {
      name: 'create_flow',
      description: 'Create a flow, optionally with its nodes and edges (validated like the editor: node data per type, no cycles, no dangling edges).',
      inputSchema: obj({ name: str('the flow name'), description: str('optional description'), nodes: { type: 'array', items: nodeSchema }, edges: { type: 'array', items: edgeSchema } }, ['name']),
      run: async (input) => {
        const flowId = randomUUID();
        const nodes = ((input.nodes as Array<Record<string, unknown>> | undefined) ?? []).map((n, i) => ({ id: typeof n.id === 'string' && n.id ? n.id : `node-${i + 1}`, ...nodeInput(n, i) }));
        const edges = ((input.edges as Array<Record<string, unknown>> | undefined) ?? []).map((e, i) => ({
          id: `edge-${i + 1}`, source: String(e.source), target: String(e.target), ...(typeof e.label === 'string' && { label: e.label }),
        }));
        return write(flowId, {
          type: 'CreateFlow', flowId, name: String(input.name), ...(typeof input.description === 'string' && { description: input.description }),
          ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId, nodes, edges,
        });
      },
    },
    {
      name: 'rename_flow',
      description: 'Rename a flow.',
      inputSchema: obj({ flowId: str('the flow id'), name: str('the new name') }, ['flowId', 'name']),
      run: async (input) => write(String(input.flowId), { type: 'RenameFlow', name: String(input.name) }),
    },
    {
      name: 'add_node',
      description: 'Add a node to a flow.',
      inputSchema: obj({ flowId: str('the flow id'), node: nodeSchema }, ['flowId', 'node']),
      run: async (input) => {
        const node = (input.node ?? {}) as Record<string, unknown>;
        const nodeId = typeof node.id === 'string' && node.id ? node.id : randomUUID();
        return write(String(input.flowId), { type: 'AddNode', nodeId, node: nodeInput(node, 0) });
      },
    },
    {
      name: 'update_node',
      description: "Change a node's data: the keys given replace the node's (others stay).",
      inputSchema: obj({ flowId: str('the flow id'), nodeId: str('the node id'), data: { type: 'object', description: 'data keys to set' } }, ['flowId', 'nodeId', 'data']),
      run: async (input) => write(String(input.flowId), { type: 'UpdateNode', nodeId: String(input.nodeId), patch: { data: (input.data ?? {}) as Record<string, unknown> } }),
    },
    {
      name: 'delete_node',
      description: 'Delete a node (and its edges) from a flow.',
      inputSchema: obj({ flowId: str('the flow id'), nodeId: str('the node id') }, ['flowId', 'nodeId']),
      run: async (input) => write(String(input.flowId), { type: 'DeleteNode', nodeId: String(input.nodeId) }),
    },
    {
      name: 'connect_nodes',
      description: 'Connect two nodes of a flow (source → target).',
      inputSchema: obj({ flowId: str('the flow id'), source: str('source node id'), target: str('target node id'), label: str('optional label') }, ['flowId', 'source', 'target']),
      run: async (input) =>
        write(String(input.flowId), {
          type: 'AddConnection', connectionId: randomUUID(),
          connection: { source: String(input.source), target: String(input.target), ...(typeof input.label === 'string' && { label: input.label }) },
        }),
    },
  ];
}
