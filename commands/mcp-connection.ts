import { randomUUID } from 'node:crypto';
import { type McpScope, type McpServerState, isMcpServerVisibleTo } from '../domain/mcp/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Services } from '../infra/ports/services.js';
import type { CommandContext } from './handle.js';
import { executeMcpCommand, loadMcpServer } from './mcp.js';
import { McpOutcomeError, mcpError } from './mcp-errors.js';
import { waitForMcpOutcome } from './mcp-requests.js';

/** How long a connect may take end to end: the handshake, the tool listing, and the bus in between. */
export const connectWaitMs = (services: Pick<Services, 'config'>) => services.config.MCP_CONNECT_TIMEOUT_MS * 2 + 5_000;

export const notFound = () => new DomainError('MCP_SERVER_NOT_FOUND', 'MCP server not found', 'not_found');

export async function visibleServer(services: Pick<Services, 'eventStore'>, serverId: string, scope: McpScope | null): Promise<{ state: McpServerState; revision: number }> {
  const loaded = await loadMcpServer(services, serverId);
  if (!loaded.state.exists || loaded.state.deleted) throw notFound();
  if (scope && !isMcpServerVisibleTo(loaded.state, scope)) throw notFound();
  return loaded;
}

/**
 * Asks the worker to connect and waits for its answer. Already connected: nothing to do. A
 * connect already under way (another caller, the reconnector) is joined rather than repeated.
 * A failure throws its code (MCP_CONNECT_FAILED, MCP_TIMEOUT, OUTBOUND_*, MCP_STDIO_NOT_ALLOWED…).
 */
export async function connectMcpServer(services: Services, context: CommandContext, serverId: string, scope: McpScope | null, reason: 'user' | 'auto' = 'user') {
  const requestId = randomUUID();
  const staleBefore = new Date(context.now.getTime() - connectWaitMs(services)).toISOString();
  const result = await executeMcpCommand(services, context, serverId, { type: 'RequestConnect', scope: scope ?? undefined, requestId, reason, staleBefore, at: context.now.toISOString() });
  if (result.state.state === 'connected' && result.events.length === 0) return { position: null as number | null, state: result.state };
  const pending = result.state.pendingConnect;
  if (!pending) return { position: result.position, state: result.state };
  const outcome = await waitForMcpOutcome(services.eventStore, serverId, { type: 'McpConnectRequested', requestId: pending.requestId, revision: result.revision }, connectWaitMs(services), { nap: services.mcp.nap });
  if (!outcome) throw mcpError('MCP_NO_ANSWER', 'no worker answered the connect request in time; it stays pending', { requestId: pending.requestId });
  if (outcome.type === 'McpServerConnectFailed') {
    const { error } = outcome.data as { error: { code: string; message: string } };
    throw new McpOutcomeError(error.code, error.message, { requestId: pending.requestId }, outcome.position);
  }
  return { position: outcome.position, state: (await loadMcpServer(services, serverId)).state };
}

/**
 * Asks the worker to close the connection and waits for it. When no worker answers in time the
 * state is recorded as disconnected anyway: the worker closes its connection when the request
 * reaches it, and the server must not look connected meanwhile.
 */
export async function disconnectMcpServer(services: Services, context: CommandContext, serverId: string, scope: McpScope | null) {
  const requestId = randomUUID();
  const requested = await executeMcpCommand(services, context, serverId, { type: 'RequestDisconnect', scope: scope ?? undefined, requestId, at: context.now.toISOString() });
  const outcome = await waitForMcpOutcome(services.eventStore, serverId, { type: 'McpDisconnectRequested', requestId, revision: requested.revision }, 10_000, { nap: services.mcp.nap });
  if (outcome) return { position: outcome.position };
  const recorded = await executeMcpCommand(services, context, serverId, { type: 'RecordDisconnected', requestId, at: new Date().toISOString() });
  return { position: recorded.position };
}
