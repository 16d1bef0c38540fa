import { randomUUID } from 'node:crypto';
import type { McpEvent, McpEventType, McpScope } from '../domain/mcp/index.js';
import type { CommandContext } from './handle.js';
import { connectWaitMs, visibleServer, type McpWaitPorts } from './mcp-connection.js';
import { McpOutcomeError, mcpError, notConnected } from './mcp-errors.js';
import { appendMcpEvents, waitForMcpOutcome, type Recorded } from './mcp-requests.js';

/**
 * Calls on a connected server: append the request, wait for the worker's outcome. The route
 * and the mcp_tool node both come here, so a call never assumes the connection is in this process.
 */
export interface ToolCallOutcome {
  requestId: string;
  toolName: string;
  content: unknown[];
  text: string;
  isError: boolean;
  structuredContent: unknown;
  durationMs: number;
  truncated: boolean;
  progress: Array<{ progress: number; total: number | null; message: string | null }>;
}

const parse = (json: string | null): unknown => (json === null ? null : JSON.parse(json));

/** How long to wait beyond the call's own timeout: a lazy reconnect on the worker, and the bus. */
const waitFor = (ports: McpWaitPorts, timeoutMs: number) => timeoutMs + ports.config.MCP_CONNECT_TIMEOUT_MS + 2_000;

export const callTimeoutOf = (ports: McpWaitPorts, asked?: number) => Math.min(asked ?? ports.config.MCP_CALL_TIMEOUT_MS, ports.config.MCP_CALL_TIMEOUT_MS);

async function request(
  ports: McpWaitPorts,
  context: CommandContext,
  serverId: string,
  scope: McpScope | null,
  make: (requestId: string, at: string) => McpEvent,
  waitMs: number,
  options: { signal?: AbortSignal; onEvent?: (e: Recorded) => void } = {},
): Promise<Recorded> {
  const { state } = await visibleServer(ports, serverId, scope);
  if (state.state !== 'connected') throw notConnected(state.state);
  const requestId = randomUUID();
  const event = make(requestId, context.now.toISOString());
  const appended = await appendMcpEvents(ports.eventStore, context, serverId, [event]);
  const outcome = await waitForMcpOutcome(ports.eventStore, serverId, { type: event.type as McpEventType, requestId, revision: appended.revision }, waitMs, { ...options, nap: ports.mcp.nap });
  if (!outcome) {
    if (options.signal?.aborted) {
      // The caller stopped waiting (a stopped flow run): ask the worker to abort the call on the
      // server too (the SDK sends notifications/cancelled); it records MCP_ABORTED in the history.
      if (event.type === 'McpToolCallRequested') {
        await appendMcpEvents(ports.eventStore, context, serverId, [{ type: 'McpToolCallCancelRequested', data: { requestId, reason: 'the caller stopped waiting (run stopped)', at: ports.now().toISOString() } }]).catch(() => undefined);
      }
      throw mcpError('MCP_ABORTED', 'the call was abandoned', { requestId });
    }
    throw mcpError('MCP_NO_ANSWER', 'no worker answered the request in time', { requestId });
  }
  if (outcome.type === 'McpToolCallFailed' || outcome.type === 'McpRequestFailed') {
    const { error } = outcome.data as { error: { code: string; message: string } };
    throw new McpOutcomeError(error.code, error.message, { requestId }, outcome.position);
  }
  return outcome;
}

export async function callMcpTool(
  ports: McpWaitPorts,
  context: CommandContext,
  serverId: string,
  scope: McpScope | null,
  call: { toolName: string; arguments: Record<string, unknown>; timeoutMs?: number; source: 'api' | 'flow'; processId?: string; nodeId?: string; signal?: AbortSignal },
): Promise<ToolCallOutcome & { position: number }> {
  const timeoutMs = callTimeoutOf(ports, call.timeoutMs);
  const progress: ToolCallOutcome['progress'] = [];
  const outcome = await request(
    ports,
    context,
    serverId,
    scope,
    (requestId, at) => ({
      type: 'McpToolCallRequested',
      data: { requestId, toolName: call.toolName, arguments: JSON.stringify(call.arguments), timeoutMs, source: call.source, processId: call.processId ?? null, nodeId: call.nodeId ?? null, at },
    }),
    waitFor(ports, timeoutMs),
    {
      signal: call.signal,
      onEvent(e) {
        if (e.type === 'McpToolCallProgressed') {
          const d = e.data as { progress: number; total: number | null; message: string | null };
          progress.push({ progress: d.progress, total: d.total, message: d.message });
        }
      },
    },
  );
  const d = (outcome as Recorded<Extract<McpEvent, { type: 'McpToolCallCompleted' }>>).data;
  return {
    requestId: d.requestId,
    toolName: d.toolName,
    content: parse(d.content) as unknown[],
    text: d.text,
    isError: d.isError,
    structuredContent: parse(d.structuredContent),
    durationMs: d.durationMs,
    truncated: d.truncated,
    progress,
    position: outcome.position,
  };
}

export async function listMcpResources(ports: McpWaitPorts, context: CommandContext, serverId: string, scope: McpScope | null) {
  const outcome = await request(ports, context, serverId, scope, (requestId, at) => ({ type: 'McpResourcesListRequested', data: { requestId, at } }), connectWaitMs(ports));
  const d = (outcome as Recorded<Extract<McpEvent, { type: 'McpResourcesListed' }>>).data;
  return { resources: parse(d.resources) as unknown[], resourceTemplates: parse(d.resourceTemplates) as unknown[] };
}

export async function readMcpResource(ports: McpWaitPorts, context: CommandContext, serverId: string, scope: McpScope | null, uri: string, askedTimeoutMs?: number) {
  const timeoutMs = callTimeoutOf(ports, askedTimeoutMs);
  const outcome = await request(ports, context, serverId, scope, (requestId, at) => ({ type: 'McpResourceReadRequested', data: { requestId, uri, timeoutMs, at } }), waitFor(ports, timeoutMs));
  const d = (outcome as Recorded<Extract<McpEvent, { type: 'McpResourceRead' }>>).data;
  return { uri: d.uri, contents: parse(d.contents) as unknown[], truncated: d.truncated, durationMs: d.durationMs, position: outcome.position };
}

/** Lists the tools afresh (the read model keeps the list the last connect or refresh saw). */
export async function refreshMcpTools(ports: McpWaitPorts, context: CommandContext, serverId: string, scope: McpScope | null) {
  const outcome = await request(ports, context, serverId, scope, (requestId, at) => ({ type: 'McpToolsListRequested', data: { requestId, at } }), connectWaitMs(ports));
  const d = (outcome as Recorded<Extract<McpEvent, { type: 'McpToolsListed' }>>).data;
  return { position: outcome.position, tools: parse(d.tools) as unknown[] };
}
