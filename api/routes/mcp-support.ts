import { z } from 'zod';
import { MCP_STATES, MCP_TRANSPORTS } from '../../domain/mcp/index.js';
import { getMcpServerView } from '../../projections/mcp.js';
import { mcpScopeOf } from '../../commands/mcp.js';
import type { Principal } from '../../domain/shared/principal.js';
import type { Services } from '../../ports/services.js';
import { McpOutcomeError } from '../../commands/mcp-errors.js';
import { mcpServerStreamId } from '../../domain/mcp/index.js';
import { NotFoundError } from '../errors.js';
import type { RouteInput, RouteReply } from '../route.js';

export const tag = 'MCP';
export const auth = 'bearer' as const;

export const serverParams = z.strictObject({ serverId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'not a server id') });

const errorOut = z.object({ code: z.string(), message: z.string(), at: z.string() });
export const serverOut = z.object({
  id: z.string(),
  name: z.string(),
  transport: z.enum(MCP_TRANSPORTS),
  command: z.string().nullable(),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()).describe('values masked'),
  url: z.string().nullable(),
  headers: z.record(z.string(), z.string()).describe('values masked'),
  autoReconnect: z.boolean(),
  state: z.enum(MCP_STATES),
  lastError: errorOut.nullable(),
  serverInfo: z.object({ name: z.string(), version: z.string(), protocolVersion: z.string().nullable(), instructions: z.string().nullable() }).nullable(),
  capabilities: z.record(z.string(), z.unknown()).nullable(),
  transportUsed: z.enum(MCP_TRANSPORTS).nullable(),
  connectedAt: z.string().nullable(),
  toolCount: z.number().nullable(),
  reconnect: z.object({ attempts: z.number(), nextAttemptAt: z.string().nullable() }),
  ownerId: z.string(),
  orgId: z.string().nullable(),
  workspaceId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const serverReply = z.object({ success: z.literal(true), server: serverOut });

export const commonErrors = {
  400: { description: 'VALIDATION_FAILED' },
  401: { description: 'UNAUTHENTICATED' },
  403: { description: 'FORBIDDEN (role or key scope)' },
  404: { description: 'MCP_SERVER_NOT_FOUND (also another tenant\'s server)' },
};
export const callErrors = {
  ...commonErrors,
  409: { description: 'MCP_NOT_CONNECTED' },
  502: { description: 'MCP_PROTOCOL_ERROR, MCP_CONNECTION_CLOSED, MCP_CALL_FAILED (the server failed the call)' },
  504: { description: 'MCP_TIMEOUT, MCP_NO_ANSWER (no worker answered in time)' },
};

export async function serverViewOrThrow(services: Services, principal: Principal, serverId: string) {
  const view = await getMcpServerView(services.readStore, serverId, mcpScopeOf(principal));
  if (!view) throw new NotFoundError('MCP server', 'MCP_SERVER_NOT_FOUND');
  return view;
}

/** Read-your-writes on the server's stream, then the server as the caller sees it. */
export async function settledServerReply(
  { principal, services, settle }: RouteInput<unknown, unknown, unknown>,
  serverId: string,
  position: number | null,
  status = 200,
): Promise<RouteReply> {
  await settle(position, mcpServerStreamId(serverId));
  return { status, body: { success: true, server: await serverViewOrThrow(services, principal!, serverId) } };
}

/** A failure the worker recorded (a failed call, a failed connect) is in the read model when the error answer arrives. */
export async function settledOnFailure<T>(settle: (position: number | null, streamId: string) => Promise<void>, serverId: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof McpOutcomeError) await settle(err.position, mcpServerStreamId(serverId));
    throw err;
  }
}
