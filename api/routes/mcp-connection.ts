import { z } from 'zod';
import { loadMcpServer, mcpScopeOf, setMcpAutoReconnect } from '../../commands/mcp.js';
import { connectMcpServer, disconnectMcpServer } from '../../commands/mcp-connection.js';
import { MCP_STATES, mcpServerStreamId } from '../../domain/mcp/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { flaggedMcpServers } from '../../projections/mcp.js';
import { defineRoute } from '../route.js';
import { auth, commonErrors, serverParams, serverReply, settledOnFailure, settledServerReply, tag } from './mcp-support.js';

/** Connections live in the worker; these routes append a request and wait for the worker's outcome. */
const runResult = z.object({
  serverId: z.string(),
  name: z.string(),
  stateBefore: z.enum(MCP_STATES),
  attempted: z.boolean(),
  result: z.enum(['connected', 'failed', 'skipped']),
  state: z.enum(MCP_STATES),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

/** Servers reconnected at once by one run call. */
const RUN_CONCURRENCY = 8;

const autoReconnectRoute = (enabled: boolean) =>
  defineRoute({
    method: 'POST',
    path: `/mcp/servers/{serverId}/auto-reconnect/${enabled ? 'enable' : 'disable'}`,
    operationId: enabled ? 'enableMcpAutoReconnect' : 'disableMcpAutoReconnect',
    summary: enabled ? 'enable automatic reconnection (a server down now is reconnected soon)' : 'disable automatic reconnection (pending attempts are cancelled)',
    tag,
    auth,
    permission: 'edit_resources',
    params: serverParams,
    responses: { 200: { description: 'the server', schema: serverReply }, ...commonErrors },
    async handler(input) {
      const { params, principal, services, command } = input;
      const result = await setMcpAutoReconnect(services, command, principal!, params.serverId, enabled);
      return settledServerReply(input, params.serverId, result.position);
    },
  });

export const mcpConnectionRoutes = [
  defineRoute({
    method: 'POST',
    path: '/mcp/servers/auto-reconnect/run',
    operationId: 'runMcpAutoReconnect',
    summary: "reconnect now every server of the caller's workspace with automatic reconnection on that is down (state error); answers what was done per server",
    tag,
    auth,
    permission: 'edit_resources',
    responses: {
      200: { description: 'one entry per flagged server', schema: z.object({ success: z.literal(true), attempted: z.number(), connected: z.number(), failed: z.number(), results: z.array(runResult) }) },
      401: commonErrors[401],
      403: commonErrors[403],
    },
    async handler({ principal, services, command, settle }) {
      const scope = mcpScopeOf(principal!);
      const flagged = await flaggedMcpServers(services.readStore, scope);
      const results: Array<z.infer<typeof runResult>> = [];
      const queue = [...flagged];
      const work = async () => {
        for (let doc = queue.shift(); doc; doc = queue.shift()) {
          const base = { serverId: doc._id, name: doc.name, stateBefore: doc.state };
          if (doc.state !== 'error') {
            results.push({ ...base, attempted: false, result: 'skipped', state: doc.state, error: null });
            continue;
          }
          try {
            const connected = await settledOnFailure(settle, doc._id, () => connectMcpServer(services, command, doc._id, scope, 'auto'));
            await settle(connected.position, mcpServerStreamId(doc._id));
            results.push({ ...base, attempted: true, result: connected.state.state === 'connected' ? 'connected' : 'failed', state: connected.state.state, error: null });
          } catch (err) {
            const e = err instanceof DomainError ? { code: err.code, message: err.message } : { code: 'MCP_CONNECT_FAILED', message: String((err as Error).message) };
            // From the log: the read model may not show the failure yet.
            const { state } = await loadMcpServer(services, doc._id);
            results.push({ ...base, attempted: true, result: 'failed', state: state.state, error: e });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(RUN_CONCURRENCY, flagged.length) }, work));
      const attempted = results.filter((r) => r.attempted).length;
      const connected = results.filter((r) => r.result === 'connected').length;
      return { status: 200, body: { success: true, attempted, connected, failed: attempted - connected, results } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/mcp/servers/{serverId}/connect',
    operationId: 'connectMcpServer',
    summary: 'connect to the server (the worker opens the connection; answers once it is connected, with server info and capabilities)',
    tag,
    auth,
    permission: 'edit_resources',
    params: serverParams,
    responses: {
      200: { description: 'connected (also when it already was)', schema: serverReply },
      ...commonErrors,
      403: { description: 'MCP_STDIO_NOT_ALLOWED, OUTBOUND_ADDRESS_REFUSED (rules checked again at connect)' },
      502: { description: 'MCP_CONNECT_FAILED, MCP_PROTOCOL_ERROR: the handshake failed (the server is in state error with lastError)' },
      504: { description: 'MCP_TIMEOUT, MCP_NO_ANSWER' },
    },
    async handler(input) {
      const { params, principal, services, command, settle } = input;
      const result = await settledOnFailure(settle, params.serverId, () => connectMcpServer(services, command, params.serverId, mcpScopeOf(principal!)));
      return settledServerReply(input, params.serverId, result.position);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/mcp/servers/{serverId}/disconnect',
    operationId: 'disconnectMcpServer',
    summary: 'disconnect from the server (a stdio server process ends)',
    tag,
    auth,
    permission: 'edit_resources',
    params: serverParams,
    responses: { 200: { description: 'disconnected', schema: serverReply }, ...commonErrors },
    async handler(input) {
      const { params, principal, services, command } = input;
      const result = await disconnectMcpServer(services, command, params.serverId, mcpScopeOf(principal!));
      return settledServerReply(input, params.serverId, result.position);
    },
  }),
  autoReconnectRoute(true),
  autoReconnectRoute(false),
];
