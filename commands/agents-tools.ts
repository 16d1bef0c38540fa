import type { AgentToolRef } from '../domain/agents/index.js';
import { flowDecider, flowStreamId, isVisibleTo } from '../domain/flows/index.js';
import type { McpServerState } from '../domain/mcp/state.js';
import { isMcpServerVisibleTo } from '../domain/mcp/scope.js';
import { mcpServerStreamId } from '../domain/mcp/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { MemoryPorts } from '../ports/memory.js';
import type { OutboundHttp } from '../ports/outbound-http.js';
import type { RunExecutor } from '../ports/runs.js';
import type { AgentTool } from './agents-loop.js';
import type { AgentScope } from '../domain/agents/index.js';
import { loadState, type CommandContext } from './handle.js';
import { callMcpTool } from './mcp-calls.js';
import type { McpWaitPorts } from './mcp-connection.js';
import { loadMcpServer } from './mcp.js';
import { runMemoryOperation } from './memory-operations.js';
import { startRun } from './runs.js';

/**
 * An agent's tool references resolved into loop tools at the start of each turn (so a flow's
 * trigger schema or an MCP server's tool list is read as it is now):
 * - `mcp_tool`: the server's tool as published (its `inputSchema` from the last tool listing in
 *   the server's stream), called through the MCP calls (the worker holding the connection runs it);
 * - `flow`: the flow runs synchronously with the arguments as its inputs (schema: the flow's
 *   trigger `inputSchema`, else any object); the result is the run's status and outputs;
 * - `memory`: two tools, `memory_search {query, limit?}` and `memory_save {text}`, through the
 *   memory operations in the caller's tenant, scoped by the agent's memory scope;
 * - `http`: one outbound call (under the outbound rule) with the arguments as the JSON body
 *   (as query parameters for GET); the result is the status and the body (at most 20,000 characters).
 * A reference that cannot be resolved (deleted flow, unknown server or tool) gives no tool, and
 * is reported in `unavailable`.
 */
export interface AgentToolPorts {
  eventStore: EventStore;
  mcp: McpWaitPorts;
  runs: RunExecutor;
  newId(): string;
  runSettings: { READ_YOUR_WRITES_TIMEOUT_MS: number; NODE_TIMEOUT_MS: number };
  memory: MemoryPorts;
  outbound: OutboundHttp;
  allowPrivateNetwork: boolean;
}

export interface ToolContext {
  context: CommandContext;
  scope: AgentScope;
  agentId: string;
  sessionId: string;
  memoryScope: 'agent' | 'user' | 'session' | null;
}

const toolName = (raw: string) => raw.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
const anyObject = { type: 'object', properties: {}, additionalProperties: true };

async function publishedTools(store: EventStore, serverId: string): Promise<Array<{ name: string; description?: string; inputSchema?: unknown }>> {
  // The newest listing: read backwards in pages until one is found.
  let from: number | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const events = await store.readStream(mcpServerStreamId(serverId), { direction: 'backwards', maxCount: 200, ...(from !== undefined && { fromRevision: from }) });
    for (const e of events) {
      const tools = e.type === 'McpServerConnected' || e.type === 'McpToolsListed' ? (e.data as { tools: string | null }).tools : undefined;
      if (tools === undefined) continue;
      if (tools === null) return [];
      const parsed = JSON.parse(tools) as unknown;
      return Array.isArray(parsed) ? parsed : ((parsed as { tools?: [] }).tools ?? []);
    }
    if (events.length < 200) return [];
    from = events[events.length - 1].revision - 1;
    if (from < 0) return [];
  }
  return [];
}

export async function resolveAgentTools(ports: AgentToolPorts, refs: AgentToolRef[], ctx: ToolContext): Promise<{ tools: AgentTool[]; unavailable: Array<{ ref: AgentToolRef; reason: string }> }> {
  const tools: AgentTool[] = [];
  const unavailable: Array<{ ref: AgentToolRef; reason: string }> = [];
  const taken = new Set<string>();
  const add = (tool: AgentTool) => {
    let name = tool.name;
    for (let n = 2; taken.has(name); n++) name = `${tool.name.slice(0, 60)}_${n}`;
    taken.add(name);
    tools.push({ ...tool, name });
  };
  for (const ref of refs) {
    try {
      switch (ref.kind) {
        case 'mcp_tool': {
          const { state } = await loadMcpServer(ports, ref.serverId);
          const server = state as McpServerState;
          if (!server.exists || server.deleted || !isMcpServerVisibleTo(server, ctx.scope)) throw new Error('MCP server not found');
          const info = (await publishedTools(ports.eventStore, ref.serverId)).find((t) => t.name === ref.tool);
          if (!info) throw new Error(`the server publishes no tool named ${ref.tool}`);
          add({
            name: toolName(ref.tool),
            description: info.description ?? `MCP tool ${ref.tool}`,
            inputSchema: (info.inputSchema && typeof info.inputSchema === 'object' ? info.inputSchema : anyObject) as Record<string, unknown>,
            async run(input, signal) {
              const outcome = await callMcpTool(ports.mcp, { ...ctx.context, now: new Date() }, ref.serverId, ctx.scope, { toolName: ref.tool, arguments: input, source: 'api', signal });
              if (outcome.isError) throw new Error(outcome.text || 'the tool reported an error');
              return outcome.text || JSON.stringify(outcome.structuredContent ?? outcome.content);
            },
          });
          break;
        }
        case 'flow': {
          const { state: flow } = await loadState(ports.eventStore, flowStreamId(ref.flowId), flowDecider);
          if (!flow.exists || flow.deleted || !isVisibleTo(flow, ctx.scope)) throw new Error('flow not found');
          add({
            name: toolName(ref.name ?? `flow_${(flow as { name?: string }).name ?? ref.flowId}`),
            description: ref.description ?? `Runs the flow "${(flow as { name?: string }).name ?? ref.flowId}" with the arguments as its inputs and answers its outputs.`,
            inputSchema: (flow.trigger?.inputSchema ?? anyObject) as Record<string, unknown>,
            async run(input, signal) {
              let processId: string | null = null;
              const newId = () => (processId = ports.newId());
              const stop = () => processId && ports.runs.abort(processId, 'the agent turn stopped');
              signal.addEventListener('abort', stop, { once: true });
              try {
                const started = await startRun({ eventStore: ports.eventStore, runs: ports.runs, newId, settings: ports.runSettings }, { ...ctx.context, now: new Date() }, {
                  flowId: ref.flowId, mode: 'flow', inputs: input, async: false, requestedBy: ctx.scope.userId, source: `agent:${ctx.agentId}`, scope: ctx.scope,
                }, { userId: ctx.scope.userId, idempotencyKey: null });
                const run = started.state ?? started.repeated;
                if (!run) throw new Error('the run did not finish');
                if (run.status !== 'completed') throw new Error(`the run ${run.status}${run.failure ? `: ${run.failure.reason}` : ''}`);
                return { processId: started.processId, status: run.status, outputs: run.outputs };
              } finally {
                signal.removeEventListener('abort', stop);
              }
            },
          });
          break;
        }
        case 'memory': {
          const subject = ctx.memoryScope === 'session' ? { runId: ctx.sessionId } : ctx.memoryScope === 'user' ? { userId: ctx.scope.userId } : { agentId: ctx.agentId };
          const actor = (signal: AbortSignal) => ({ tenant: ctx.scope, context: { ...ctx.context, now: new Date() }, source: `agent:${ctx.agentId}`, settle: async () => {}, signal });
          add({
            name: 'memory_search',
            description: 'Searches what was remembered earlier (most relevant first).',
            inputSchema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 20 } }, required: ['query'] },
            async run(input, signal) {
              const result = await runMemoryOperation(ports.memory, actor(signal), { operation: 'search', query: String(input.query), limit: typeof input.limit === 'number' ? input.limit : 5, scope: subject } as never);
              return result.operation === 'search' ? result.results.map((r) => ({ text: r.text, score: r.score })) : result;
            },
          });
          add({
            name: 'memory_save',
            description: 'Remembers a fact for later conversations.',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
            async run(input, signal) {
              const result = await runMemoryOperation(ports.memory, actor(signal), { operation: 'save', text: String(input.text), scope: subject } as never);
              return result.operation === 'save' ? { saved: result.memory.id } : result;
            },
          });
          break;
        }
        case 'http': {
          const config = ref.webhookConfig;
          add({
            name: toolName(config.name ?? 'http_request'),
            description: config.description ?? `Calls ${config.method} ${config.url} with the arguments (JSON body, or query parameters for GET).`,
            inputSchema: (config.inputSchema ?? anyObject) as Record<string, unknown>,
            async run(input, signal) {
              let url = config.url;
              const get = config.method === 'GET' || config.method === 'DELETE';
              if (get) {
                const u = new URL(url);
                for (const [k, v] of Object.entries(input)) u.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
                url = u.toString();
              }
              const response = await ports.outbound.fetch(url, {
                method: config.method,
                headers: { ...(get ? {} : { 'content-type': 'application/json' }), ...config.headers },
                ...(get ? {} : { body: JSON.stringify(input) }),
                timeoutMs: config.timeoutMs ?? 30_000,
                signal,
                allowPrivateNetwork: ports.allowPrivateNetwork,
                maxResponseBytes: 100_000,
                truncate: true,
              });
              const body = response.body.toString('utf8');
              if (response.status >= 400) throw new Error(`HTTP ${response.status}: ${body.slice(0, 2000)}`);
              return `HTTP ${response.status}\n${body}`;
            },
          });
          break;
        }
      }
    } catch (err) {
      unavailable.push({ ref, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  return { tools, unavailable };
}
