import { z } from 'zod';
import { deleteMcpServer, mcpScopeOf, registerMcpServer, updateMcpServer } from '../../commands/mcp.js';
import { disconnectMcpServer, visibleServer } from '../../commands/mcp-connection.js';
import { mcpServerInputSchema, mcpServerStreamId, mcpServerUpdateSchema } from '../../domain/mcp/index.js';
import { listMcpServers } from '../../projections/mcp.js';
import { defineRoute, type RouteDef } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';
import { mcpCallRoutes } from './mcp-calls.js';
import { mcpConnectionRoutes } from './mcp-connection.js';
import { auth, commonErrors, serverOut, serverParams, serverReply, serverViewOrThrow, settledServerReply, tag } from './mcp-support.js';

/**
 * MCP servers: the registry (this file), connections and automatic reconnection
 * (mcp-connection.ts), tools, resources and history (mcp-calls.ts). Secrets in env and headers
 * are sealed in events and answered masked; another tenant's server answers 404.
 */
const registryRoutes = [
  defineRoute({
    method: 'GET',
    path: '/mcp/servers',
    operationId: 'listMcpServers',
    summary: 'list the MCP servers of the active workspace, most recently updated first',
    tag,
    auth,
    permission: 'view_resources',
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(serverOut), nextCursor: z.string().nullable() }) }, ...commonErrors },
    async handler({ query, principal, services }) {
      return pageReply(await listMcpServers(services.readStore, mcpScopeOf(principal!), { limit: query.limit, cursor: query.cursor ?? null }));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/mcp/servers',
    operationId: 'registerMcpServer',
    summary: 'register an MCP server (stdio command on the allowlist, Streamable HTTP or SSE URL); env and header values are encrypted and answered masked',
    tag,
    auth,
    permission: 'edit_resources',
    body: mcpServerInputSchema,
    responses: {
      201: { description: 'registered (state disconnected)', schema: serverReply },
      400: { description: 'VALIDATION_FAILED, MCP_INVALID_CONFIG, OUTBOUND_INVALID_URL, OUTBOUND_DNS_FAILED' },
      401: commonErrors[401],
      403: { description: 'MCP_STDIO_NOT_ALLOWED (command not on MCP_STDIO_ALLOWLIST), OUTBOUND_ADDRESS_REFUSED (private or loopback URL), FORBIDDEN' },
    },
    async handler(input) {
      const { principal, body, services, command } = input;
      const { serverId, position } = await registerMcpServer(services, command, principal!, body);
      return settledServerReply(input, serverId, position, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/mcp/servers/{serverId}',
    operationId: 'getMcpServer',
    summary: 'get a server with its connection state, last error, server info and capabilities',
    tag,
    auth,
    permission: 'view_resources',
    params: serverParams,
    responses: { 200: { description: 'the server', schema: serverReply }, ...commonErrors },
    async handler({ params, principal, services }) {
      return { status: 200, body: { success: true, server: await serverViewOrThrow(services, principal!, params.serverId) } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/mcp/servers/{serverId}',
    operationId: 'updateMcpServer',
    summary: 'update a server: fields given replace the stored ones (env and headers as a whole; a value sent back masked keeps the stored secret). A connection open applies the change at the next connect.',
    tag,
    auth,
    permission: 'edit_resources',
    params: serverParams,
    body: mcpServerUpdateSchema,
    responses: {
      200: { description: 'updated', schema: serverReply },
      ...commonErrors,
      403: { description: 'MCP_STDIO_NOT_ALLOWED, OUTBOUND_ADDRESS_REFUSED, FORBIDDEN' },
    },
    async handler(input) {
      const { params, principal, body, services, command } = input;
      const result = await updateMcpServer(services, command, principal!, params.serverId, body);
      return settledServerReply(input, params.serverId, result.position);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/mcp/servers/{serverId}',
    operationId: 'deleteMcpServer',
    summary: 'delete a server; an open connection is closed first',
    tag,
    auth,
    permission: 'edit_resources',
    params: serverParams,
    responses: { 200: { description: 'deleted', schema: z.object({ success: z.literal(true), deleted: z.literal(true), id: z.string() }) }, ...commonErrors },
    async handler({ params, principal, services, command, settle }) {
      const scope = mcpScopeOf(principal!);
      const { state } = await visibleServer(services, params.serverId, scope);
      if (state.state !== 'disconnected') await disconnectMcpServer(services, command, params.serverId, scope);
      const result = await deleteMcpServer(services, command, principal!, params.serverId);
      await settle(result.position, mcpServerStreamId(params.serverId));
      return { status: 200, body: { success: true, deleted: true, id: params.serverId } };
    },
  }),
];

/** The static `/mcp/servers/auto-reconnect/run` comes before any `/mcp/servers/{serverId}/…` route. */
export const mcpRoutes: RouteDef[] = [...mcpConnectionRoutes.filter((r) => !r.path.includes('{serverId}')), ...registryRoutes, ...mcpConnectionRoutes.filter((r) => r.path.includes('{serverId}')), ...mcpCallRoutes];
