import { randomUUID } from 'node:crypto';
import { connectStaleBefore, requireMcpServer, type McpScope, type McpServerState } from '../domain/mcp/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { McpRuntime, McpSettings } from '../ports/mcp.js';
import type { CommandContext } from './handle.js';
import { executeMcpCommand, loadMcpServer } from './mcp.js';
import { McpOutcomeError, mcpError } from './mcp-errors.js';
import { waitForMcpOutcome } from './mcp-requests.js';

/** The ports a request that waits for the worker's answer uses. */
export interface McpWaitPorts {
  eventStore: EventStore;
  config: Pick<McpSettings, 'MCP_CONNECT_TIMEOUT_MS' | 'MCP_CALL_TIMEOUT_MS'>;
  /** Only its `nap`: a waiter this process's worker answers wakes at once. */
  mcp: Pick<McpRuntime, 'nap'>;
  now(): Date;
}

/** How long a connect may take end to end: the handshake, the tool listing, and the bus in between. */
export const connectWaitMs = (ports: { config: Pick<McpSettings, 'MCP_CONNECT_TIMEOUT_MS'> }) => ports.config.MCP_CONNECT_TIMEOUT_MS * 2 + 5_000;

const DISCONNECT_WAIT_MS = 10_000;


export async function visibleServer(ports: { eventStore: EventStore }, serverId: string, scope: McpScope | null): Promise<{ state: McpServerState; revision: number }> {
  const loaded = await loadMcpServer(ports, serverId);
  requireMcpServer(loaded.state, scope);
  return loaded;
}

/**
 * Asks the worker to connect and waits for its answer. Already connected: nothing to do. A
 * connect already under way (another caller, the reconnector) is joined rather than repeated.
 * A failure throws its code (MCP_CONNECT_FAILED, MCP_TIMEOUT, OUTBOUND_*, MCP_STDIO_NOT_ALLOWED…).
 */
export async function connectMcpServer(ports: McpWaitPorts, context: CommandContext, serverId: string, scope: McpScope | null, reason: 'user' | 'auto' = 'user') {
  const requestId = randomUUID();
  const staleBefore = connectStaleBefore(context.now, connectWaitMs(ports));
  const result = await executeMcpCommand(ports, context, serverId, { type: 'RequestConnect', scope: scope ?? undefined, requestId, reason, staleBefore, at: context.now.toISOString() });
  if (result.state.state === 'connected' && result.events.length === 0) return { position: null as number | null, state: result.state };
  const pending = result.state.pendingConnect;
  if (!pending) return { position: result.position, state: result.state };
  const outcome = await waitForMcpOutcome(ports.eventStore, serverId, { type: 'McpConnectRequested', requestId: pending.requestId, revision: result.revision }, connectWaitMs(ports), { nap: ports.mcp.nap });
  if (!outcome) throw mcpError('MCP_NO_ANSWER', 'no worker answered the connect request in time; it stays pending', { requestId: pending.requestId });
  if (outcome.type === 'McpServerConnectFailed') {
    const { error } = outcome.data as { error: { code: string; message: string } };
    throw new McpOutcomeError(error.code, error.message, { requestId: pending.requestId }, outcome.position);
  }
  return { position: outcome.position, state: (await loadMcpServer(ports, serverId)).state };
}

/**
 * Asks the worker to close the connection and waits for it. When no worker answers in time the
 * state is recorded as disconnected anyway: the worker closes its connection when the request
 * reaches it, and the server must not look connected meanwhile.
 */
export async function disconnectMcpServer(ports: McpWaitPorts, context: CommandContext, serverId: string, scope: McpScope | null) {
  const requestId = randomUUID();
  const requested = await executeMcpCommand(ports, context, serverId, { type: 'RequestDisconnect', scope: scope ?? undefined, requestId, at: context.now.toISOString() });
  const outcome = await waitForMcpOutcome(ports.eventStore, serverId, { type: 'McpDisconnectRequested', requestId, revision: requested.revision }, DISCONNECT_WAIT_MS, { nap: ports.mcp.nap });
  if (outcome) return { position: outcome.position };
  const recorded = await executeMcpCommand(ports, context, serverId, { type: 'RecordDisconnected', requestId, at: ports.now().toISOString() });
  return { position: recorded.position };
}
