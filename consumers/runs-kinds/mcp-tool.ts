import { randomUUID } from 'node:crypto';
import { callMcpTool } from '../../commands/mcp-calls.js';
import type { McpWaitPorts } from '../../commands/mcp-connection.js';
import { loadRun } from '../../commands/runs.js';
import { renderValue, type NodeKind, type NodeKindContext } from '../../domain/runs/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { Clock } from '../../ports/clock.js';
import type { EventStore } from '../../ports/event-store.js';
import { NodeKindError } from './webhook.js';

/**
 * `data.nodeType: "mcp_tool"`: runs a tool of a registered MCP server.
 * - `data.arguments`: every string value (nested ones too) is a template; a value that is one
 *   whole placeholder (`"{{inputs.a}}"`) keeps its type (a number stays a number);
 * - the server must belong to the flow owner's scope (same rule as the API: else
 *   MCP_SERVER_NOT_FOUND) and be connected (else MCP_NOT_CONNECTED);
 * - the call goes through the same request/outcome events as the API's, so it works whichever
 *   process runs the node (synchronous runs execute in the API process, the connection lives in
 *   the worker);
 * - output: the tool's text content; metadata: structuredContent, isError, durationMs, serverId,
 *   toolName, truncated; a result with isError fails the node with MCP_TOOL_ERROR.
 */
function renderArguments(value: unknown, context: NodeKindContext): unknown {
  if (typeof value === 'string') return renderValue(value, context);
  if (Array.isArray(value)) return value.map((v) => renderArguments(v, context));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderArguments(v, context)]));
  return value;
}

/** What the mcp_tool kind uses: the run's log and clock, and the ports an MCP call waits with. */
export interface McpToolKindPorts {
  eventStore: EventStore;
  clock: Clock;
  mcp: McpWaitPorts;
}

export function mcpToolKind(ports: McpToolKindPorts): NodeKind {
  return {
    type: 'mcp_tool',
    async execute(node, context) {
      const { mcpServerId, toolName } = node.data as { mcpServerId?: unknown; toolName?: unknown };
      if (typeof mcpServerId !== 'string' || mcpServerId === '') throw new NodeKindError('MCP_SERVER_MISSING', 'an mcp_tool node needs data.mcpServerId');
      if (typeof toolName !== 'string' || toolName === '') throw new NodeKindError('MCP_TOOL_MISSING', 'an mcp_tool node needs data.toolName');
      const args = renderArguments(node.data.arguments ?? {}, context) as Record<string, unknown>;
      const run = await loadRun(ports.eventStore, context.processId);
      const scope = { userId: run.ownerId, orgId: run.orgId, workspaceId: run.workspaceId };
      const command = { actorId: run.requestedBy, orgId: run.orgId, workspaceId: run.workspaceId, correlationId: randomUUID(), causationId: null, requestId: null, now: ports.clock.now() };
      let result;
      try {
        result = await callMcpTool(ports.mcp, command, mcpServerId, scope, { toolName, arguments: args, source: 'flow', processId: context.processId, nodeId: node.id, signal: context.signal });
      } catch (err) {
        if (err instanceof DomainError) throw new NodeKindError(err.code, err.message, { serverId: mcpServerId, toolName });
        throw err;
      }
      const metadata = { structuredContent: result.structuredContent, isError: result.isError, durationMs: result.durationMs, serverId: mcpServerId, toolName, truncated: result.truncated };
      if (result.isError) throw new NodeKindError('MCP_TOOL_ERROR', result.text.slice(0, 2000) || `the tool ${toolName} reported an error`, metadata);
      return { output: result.text, metadata };
    },
  };
}
