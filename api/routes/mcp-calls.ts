import { z } from 'zod';
import { mcpScopeOf } from '../../commands/mcp.js';
import { callMcpTool, listMcpResources, readMcpResource, refreshMcpTools } from '../../commands/mcp-calls.js';
import { notConnected } from '../../commands/mcp-errors.js';
import { mcpServerStreamId } from '../../domain/mcp/index.js';
import { findMcpServerDoc, toolsOf } from '../../projections/mcp.js';
import { listMcpHistory } from '../../projections/mcp-history.js';
import { NotFoundError } from '../errors.js';
import { defineRoute } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';
import { auth, callErrors, commonErrors, serverParams, settledOnFailure, tag } from './mcp-support.js';

const toolOut = z.object({ name: z.string(), title: z.string().optional(), description: z.string().optional(), inputSchema: z.unknown(), outputSchema: z.unknown().optional(), annotations: z.unknown().optional() });
const callResult = z.object({
  requestId: z.string(),
  toolName: z.string(),
  content: z.array(z.unknown()),
  text: z.string().describe('the text items of content, joined by newlines'),
  isError: z.boolean(),
  structuredContent: z.unknown().nullable(),
  durationMs: z.number(),
  truncated: z.boolean().describe('the result was larger than MCP_MAX_RESULT_BYTES and was cut'),
  progress: z.array(z.object({ progress: z.number(), total: z.number().nullable(), message: z.string().nullable() })),
});
const timeoutMs = z.number().int().min(1).max(24 * 3600 * 1000).optional().describe('per-call timeout in ms, at most MCP_CALL_TIMEOUT_MS (the default)');

export const mcpCallRoutes = [
  defineRoute({
    method: 'GET',
    path: '/mcp/servers/{serverId}/tools',
    operationId: 'listMcpTools',
    summary: "list the server's tools (all pages): the list the last connect saw, or listed afresh with refresh=true",
    tag,
    auth,
    permission: 'view_resources',
    params: serverParams,
    query: z.strictObject({ refresh: z.enum(['true', 'false']).optional() }),
    responses: {
      200: { description: 'the tools', schema: z.object({ success: z.literal(true), tools: z.array(toolOut), updatedAt: z.string().nullable() }) },
      ...callErrors,
    },
    async handler({ params, query, principal, services, command, settle }) {
      const scope = mcpScopeOf(principal!);
      let doc = await findMcpServerDoc(services.readStore, params.serverId, scope);
      if (!doc) throw new NotFoundError('MCP server', 'MCP_SERVER_NOT_FOUND');
      if (doc.state !== 'connected') throw notConnected(doc.state);
      if (query.refresh === 'true' || doc.tools === null) {
        const listed = await refreshMcpTools(services, command, params.serverId, scope);
        await settle(listed.position, mcpServerStreamId(params.serverId));
        doc = (await findMcpServerDoc(services.readStore, params.serverId, scope)) ?? doc;
      }
      const { tools, updatedAt } = toolsOf(doc);
      return { status: 200, body: { success: true, tools: tools ?? [], updatedAt } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/mcp/servers/{serverId}/tools/call',
    operationId: 'callMcpTool',
    summary: 'run a tool with arguments; answers its content, isError, structuredContent, duration and progress notifications (each call is in the server history)',
    tag,
    auth,
    permission: 'edit_resources',
    params: serverParams,
    body: z.strictObject({ name: z.string().min(1).max(256), arguments: z.record(z.string(), z.unknown()).default({}), timeoutMs }),
    responses: { 200: { description: 'the tool ran (isError: true when the tool itself reported a failure)', schema: z.object({ success: z.literal(true), result: callResult }) }, ...callErrors },
    async handler({ params, body, principal, services, command, settle }) {
      const { position, ...result } = await settledOnFailure(settle, params.serverId, () =>
        callMcpTool(services, command, params.serverId, mcpScopeOf(principal!), { toolName: body.name, arguments: body.arguments, timeoutMs: body.timeoutMs, source: 'api' }),
      );
      // Read your writes: the call is in the history when the answer arrives.
      await settle(position, mcpServerStreamId(params.serverId));
      return { status: 200, body: { success: true, result } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/mcp/servers/{serverId}/resources',
    operationId: 'listMcpResources',
    summary: "list the server's resources and resource templates (all pages)",
    tag,
    auth,
    permission: 'view_resources',
    params: serverParams,
    responses: {
      200: { description: 'resources and templates', schema: z.object({ success: z.literal(true), resources: z.array(z.unknown()), resourceTemplates: z.array(z.unknown()) }) },
      ...callErrors,
    },
    async handler({ params, principal, services, command }) {
      const list = await listMcpResources(services, command, params.serverId, mcpScopeOf(principal!));
      return { status: 200, body: { success: true, ...list } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/mcp/servers/{serverId}/resources/read',
    operationId: 'readMcpResource',
    summary: 'read a resource by URI (contents size-capped, flag truncated)',
    tag,
    auth,
    permission: 'view_resources',
    params: serverParams,
    body: z.strictObject({ uri: z.string().min(1).max(4096), timeoutMs }),
    responses: {
      200: { description: 'the contents', schema: z.object({ success: z.literal(true), uri: z.string(), contents: z.array(z.unknown()), truncated: z.boolean(), durationMs: z.number() }) },
      ...callErrors,
    },
    async handler({ params, body, principal, services, command, settle }) {
      const { position, ...read } = await settledOnFailure(settle, params.serverId, () => readMcpResource(services, command, params.serverId, mcpScopeOf(principal!), body.uri, body.timeoutMs));
      await settle(position, mcpServerStreamId(params.serverId));
      return { status: 200, body: { success: true, ...read } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/mcp/servers/{serverId}/history',
    operationId: 'listMcpHistory',
    summary: "the server's tool calls and resource reads, newest first (added operation)",
    tag,
    auth,
    permission: 'view_resources',
    params: serverParams,
    query: pageQuery.extend({ kind: z.enum(['tool_call', 'resource_read']).optional() }),
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(z.unknown()), nextCursor: z.string().nullable() }) }, ...commonErrors },
    async handler({ params, query, principal, services }) {
      const doc = await findMcpServerDoc(services.readStore, params.serverId, mcpScopeOf(principal!));
      if (!doc) throw new NotFoundError('MCP server', 'MCP_SERVER_NOT_FOUND');
      return pageReply(await listMcpHistory(services.readStore, params.serverId, { limit: query.limit, cursor: query.cursor ?? null, kind: query.kind }));
    },
  }),
];
