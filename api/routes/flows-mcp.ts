import { z } from 'zod';
import { callFlowTool, setFlowMcpExposure } from '../../commands/flows-mcp.js';
import { flowScopeOf } from '../../commands/flows.js';
import { loadState } from '../../commands/handle.js';
import { flowDecider, flowNotFound, flowStreamId, sanitizeToolName, mcpInputSchemaSchema, mcpToolNameSchema, MAX_FLOW_DESCRIPTION_LENGTH, toolInputSchemaOf } from '../../domain/flows/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { Principal } from '../../domain/shared/principal.js';
import type { McpToolHost } from '../../ports/mcp-server.js';
import { findMcpToolFlow, listMcpToolFlows, type FlowRecord } from '../../projections/flows.js';
import { errorBody } from '../errors.js';
import { defineRoute, type RouteInput, type RouteReply } from '../route.js';
import { etagOf, ifMatchOf, visibleFlow } from './flows.js';
import { flowParams, readErrors, writeErrors } from './flows-schemas.js';

/**
 * Flows as tools of the service's own MCP server (issue 32 item 5): the owner's setting
 * (`GET|PUT /flows/{flowId}/mcp`), the server itself (`POST /mcp`, Streamable HTTP, stateless;
 * GET and DELETE are no routes, so the router answers 405 with `Allow: POST`, as the spec asks of
 * a server without a standalone stream) and its protected resource metadata (RFC 9728), also
 * served at `/.well-known/oauth-protected-resource/api/mcp` (api/app.ts).
 */

type AnyInput = RouteInput<unknown, unknown, unknown>;

export const MCP_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/api/mcp';

/** This service's public base (PUBLIC_URL, else the origin the request came to), without a trailing slash. */
const baseOf = (input: Pick<AnyInput, 'services' | 'koa'>) => (input.services.config.PUBLIC_URL ?? `${input.koa.protocol}://${input.koa.host}`).replace(/\/+$/, '');

/** RFC 9728 protected resource metadata of `/api/mcp`: the service is its own authorization server. */
export function mcpResourceMetadata(input: Pick<AnyInput, 'services' | 'koa'>) {
  const base = baseOf(input);
  return {
    resource: `${base}/api/mcp`,
    authorization_servers: [base],
    bearer_methods_supported: ['header'],
    resource_name: 'Flow automation service: flows as MCP tools',
    resource_documentation: `${base}/api/docs`,
  };
}

const mcpView = z.object({
  enabled: z.boolean(),
  toolName: z.string(),
  description: z.string().nullable(),
  inputSchema: z.record(z.string(), z.unknown()).describe('the schema tools/list shows: the flow trigger\'s inputSchema, else the given one, else any object'),
  givenInputSchema: z.record(z.string(), z.unknown()).nullable(),
  inputSchemaSource: z.enum(['trigger', 'given', 'default']),
  updatedAt: z.string().nullable(),
});
const mcpReply = z.object({ success: z.literal(true), flowId: z.string(), mcp: mcpView });

function viewOf(flow: FlowRecord, exposure: { enabled: boolean; toolName: string; description: string | null; inputSchema: Record<string, unknown> | null; at: string } | null, defaultName: string) {
  const trigger = flow.trigger.inputSchema;
  const given = exposure?.inputSchema ?? null;
  const source = trigger && trigger.type === 'object' ? 'trigger' : given ? 'given' : 'default';
  return {
    enabled: exposure?.enabled ?? false,
    toolName: exposure?.toolName ?? defaultName,
    description: exposure?.description ?? null,
    inputSchema: toolInputSchemaOf(trigger, given),
    givenInputSchema: given,
    inputSchemaSource: source as 'trigger' | 'given' | 'default',
    updatedAt: exposure?.at ?? null,
  };
}

async function exposureAnswer(input: AnyInput, flowId: string): Promise<RouteReply> {
  const flow = await visibleFlow(input, flowId);
  // The exposure from the flow's own stream: the answer of a PUT is never older than the write.
  const { state } = await loadState(input.services.eventStore, flowStreamId(flowId), flowDecider);
  if (!state.exists || state.deleted) throw flowNotFound();
  return { status: 200, body: { success: true, flowId, mcp: viewOf(flow, state.mcp, sanitizeToolName(state.name, flowId)) }, headers: etagOf(state.version) };
}

/** The caller's tools for one MCP request: their tenant's exposed flows. */
function toolHost(input: AnyInput, principal: Principal): McpToolHost {
  const { services } = input;
  const scope = flowScopeOf(principal);
  return {
    async listTools() {
      const flows = await listMcpToolFlows(services.readStore, scope);
      return flows.map((f) => ({ name: f.toolName, title: f.name, description: f.description || `Runs the flow "${f.name}"`, inputSchema: toolInputSchemaOf(f.triggerInputSchema, f.givenInputSchema) }));
    },
    async callTool(name, args, progress) {
      const flow = await findMcpToolFlow(services.readStore, scope, name);
      if (!flow) return null;
      // Running a flow takes the permission POST /flows/{flowId}/run takes.
      try {
        await services.auth.authorize(principal, 'edit_resources');
      } catch (err) {
        if (err instanceof DomainError) return { text: `${err.code}: ${err.message}`, structuredContent: { processId: null, status: 'refused', outputs: null, error: { code: err.code, message: err.message } }, isError: true };
        throw err;
      }
      const ports = { eventStore: services.eventStore, runs: services.runs, newId: services.newId, settings: services.config };
      try {
        return await callFlowTool(ports, { ...input.command, now: services.now() }, scope, flow.flowId, args, progress);
      } catch (err) {
        // Refusals before the run exists (budget, a flow deleted meanwhile) are the tool's error, not the protocol's.
        if (err instanceof DomainError) return { text: `${err.code}: ${err.message}`, structuredContent: { processId: null, status: 'refused', outputs: null, error: { code: err.code, message: err.message } }, isError: true };
        throw err;
      }
    },
  };
}

/** 401 of `/api/mcp`, pointing MCP clients at the protected resource metadata (MCP authorization spec). */
function unauthenticated(input: AnyInput, err: DomainError): RouteReply {
  return {
    status: 401,
    body: errorBody(err.code, err.message),
    headers: { 'WWW-Authenticate': `Bearer resource_metadata="${baseOf(input)}${MCP_RESOURCE_METADATA_PATH}"` },
  };
}

const jsonRpcBody = z.union([z.looseObject({ jsonrpc: z.literal('2.0') }), z.array(z.looseObject({ jsonrpc: z.literal('2.0') }))]);
/** What the MCP SDK's transport answers when it refuses a request itself (JSON-RPC, not our Error body). */
const jsonRpcError = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
});
/** Our own error body, for the refusals made before the SDK sees the request (bad body, …). */
const apiError = z.object({
  success: z.literal(false),
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});
const tag = 'MCP server';
export const flowMcpRoutes = [
  defineRoute({
    method: 'GET',
    path: '/flows/{flowId}/mcp',
    operationId: 'getFlowMcpExposure',
    summary: "the flow's exposure as a tool of the service's MCP server (/api/mcp)",
    tag: 'Flows',
    auth: 'bearer',
    permission: 'view_resources',
    params: flowParams,
    responses: { 200: { description: 'the setting (disabled with the default name when never set)', schema: mcpReply }, ...readErrors },
    async handler(input) {
      return exposureAnswer(input as AnyInput, input.params.flowId);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/flows/{flowId}/mcp',
    operationId: 'setFlowMcpExposure',
    summary: 'expose the flow as an MCP tool of its workspace (or stop): tool name unique per workspace, input schema from the trigger, else given, else any object (If-Match optional)',
    tag: 'Flows',
    auth: 'bearer',
    permission: 'edit_resources',
    params: flowParams,
    body: z.strictObject({
      enabled: z.boolean(),
      toolName: mcpToolNameSchema.optional().describe("absent: the current name, else the flow's name with other characters than [A-Za-z0-9_-] as _"),
      description: z.string().max(MAX_FLOW_DESCRIPTION_LENGTH).nullable().optional().describe("absent: unchanged; null: the flow's description"),
      inputSchema: mcpInputSchemaSchema.nullable().optional().describe('a JSON Schema with type "object" (checked by ajv); used when the flow trigger declares none'),
    }),
    responses: {
      200: { description: 'the setting as written', schema: mcpReply },
      ...writeErrors,
      409: { description: 'MCP_TOOL_NAME_TAKEN: another flow of the workspace has this tool name (compared without case)' },
    },
    async handler(input) {
      const { services, body, params } = input;
      const scope = flowScopeOf(input.principal!);
      const { position } = await setFlowMcpExposure({ eventStore: services.eventStore, sealer: services.sealedBox }, input.command, params.flowId, scope, body, ifMatchOf(input));
      await input.settle(position, flowStreamId(params.flowId));
      return exposureAnswer(input as AnyInput, params.flowId);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/mcp',
    operationId: 'mcpServer',
    summary:
      "the service's MCP server (Streamable HTTP, stateless; JSON-RPC in, JSON or SSE out): tools are the caller's workspace's exposed flows; Authorization: Bearer <JWT or API key> (401 carries WWW-Authenticate with resource_metadata)",
    tag,
    auth: 'none',
    body: jsonRpcBody,
    responses: {
      200: { description: 'JSON-RPC answer (application/json or text/event-stream with progress notifications)' },
      202: { description: 'a notification or response was accepted' },
      400: { description: 'the body is not JSON-RPC (our VALIDATION_FAILED), or the SDK refused the message (a JSON-RPC error)', schema: z.union([apiError, jsonRpcError]) },
      401: { description: 'UNAUTHENTICATED, with WWW-Authenticate: Bearer resource_metadata="…/.well-known/oauth-protected-resource/api/mcp"' },
      406: { description: 'Accept must list application/json and text/event-stream (a JSON-RPC error, as the MCP transport answers it)', schema: jsonRpcError },
      415: { description: 'the body is not application/json (our UNSUPPORTED_MEDIA_TYPE, or the SDK\'s JSON-RPC error)', schema: z.union([apiError, jsonRpcError]) },
    },
    async handler(input) {
      const anyInput = input as AnyInput;
      let principal: Principal;
      try {
        principal = await input.services.auth.authenticate(input.koa.get('authorization') || undefined);
        await input.services.auth.authorize(principal, 'view_resources');
      } catch (err) {
        if (err instanceof DomainError && err.kind === 'unauthenticated') return unauthenticated(anyInput, err);
        throw err;
      }
      input.koa.respond = false;
      input.koa.req.socket.setTimeout(0);
      await input.services.mcpServer.handle(input.koa.req, input.koa.res, input.body, toolHost(anyInput, principal));
      return { status: 200, body: undefined };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/mcp/oauth-protected-resource',
    operationId: 'mcpProtectedResourceMetadata',
    summary: `RFC 9728 protected resource metadata of /api/mcp (also at ${MCP_RESOURCE_METADATA_PATH}): the service is its own authorization server (JWTs from login, API keys)`,
    tag,
    auth: 'none',
    responses: {
      200: {
        description: 'the metadata',
        schema: z.object({ resource: z.string(), authorization_servers: z.array(z.string()), bearer_methods_supported: z.array(z.string()), resource_name: z.string(), resource_documentation: z.string() }),
      },
    },
    async handler(input) {
      return { status: 200, body: mcpResourceMetadata(input as AnyInput), headers: { 'Cache-Control': 'public, max-age=3600' } };
    },
  }),
];
