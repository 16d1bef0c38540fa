import { z } from 'zod';

/**
 * Events of an MCP server aggregate (stream `mcpserver-<serverId>`). Three families:
 * - registry: who owns the server and how to reach it (secret values of env and headers are
 *   sealed by the command before they get here: the log never holds them in clear);
 * - connection: a request (`McpConnectRequested`, `McpDisconnectRequested`) from any API
 *   instance and the outcome recorded by the worker that holds the connection;
 * - calls: tool calls, resource listings and reads, each a request and an outcome carrying the
 *   same `requestId`, appended without a revision check so concurrent calls never conflict.
 */
export const MCP_TRANSPORTS = ['stdio', 'http', 'sse'] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];
export const MCP_STATES = ['disconnected', 'connecting', 'connected', 'error'] as const;
export type McpConnectionState = (typeof MCP_STATES)[number];

const errorSchema = z.object({ code: z.string(), message: z.string() });
export type McpError = z.infer<typeof errorSchema>;

const endpointShape = {
  name: z.string(),
  transport: z.enum(MCP_TRANSPORTS),
  command: z.string().nullable(),
  args: z.array(z.string()),
  /** Values sealed (SealedBox), keys in clear. */
  env: z.record(z.string(), z.string()),
  url: z.string().nullable(),
  /** Values sealed (SealedBox), names in clear. */
  headers: z.record(z.string(), z.string()),
  autoReconnect: z.boolean(),
};

const serverInfoSchema = z.object({ name: z.string(), version: z.string(), protocolVersion: z.string().nullable(), instructions: z.string().nullable() });
export type McpServerInfo = z.infer<typeof serverInfoSchema>;

const at = z.string();
const requestId = z.string();

export const mcpEventSchemas = {
  McpServerRegistered: z.object({ serverId: z.string(), ownerId: z.string(), orgId: z.string().nullable(), workspaceId: z.string().nullable(), ...endpointShape, at }),
  McpServerUpdated: z.object({ ...endpointShape, at }),
  McpServerDeleted: z.object({ at }),
  McpAutoReconnectSet: z.object({ enabled: z.boolean(), at }),

  McpConnectRequested: z.object({ requestId, reason: z.enum(['user', 'auto']), at }),
  McpServerConnected: z.object({
    requestId,
    serverInfo: serverInfoSchema,
    /** JSON text: capability objects are the server's shape, not ours. */
    capabilities: z.string(),
    transportUsed: z.enum(MCP_TRANSPORTS),
    /** JSON text of the tool list read right after the handshake (null: the server has no tools). */
    tools: z.string().nullable(),
    at,
  }),
  McpServerConnectFailed: z.object({ requestId, error: errorSchema, attempt: z.number().int(), nextReconnectAt: z.string().nullable(), at }),
  McpConnectionLost: z.object({ connectionId: z.string(), error: errorSchema, attempt: z.number().int(), nextReconnectAt: z.string().nullable(), at }),
  McpDisconnectRequested: z.object({ requestId, at }),
  McpServerDisconnected: z.object({ requestId: z.string().nullable(), at }),

  McpToolsListRequested: z.object({ requestId, at }),
  McpToolsListed: z.object({ requestId, tools: z.string(), at }),
  McpToolCallRequested: z.object({
    requestId,
    toolName: z.string(),
    /** JSON text of the arguments object. */
    arguments: z.string(),
    timeoutMs: z.number().int().positive(),
    source: z.enum(['api', 'flow']),
    processId: z.string().nullable(),
    nodeId: z.string().nullable(),
    at,
  }),
  McpToolCallProgressed: z.object({ requestId, progress: z.number(), total: z.number().nullable(), message: z.string().nullable(), at }),
  McpToolCallCompleted: z.object({
    requestId,
    toolName: z.string(),
    /** JSON text of the content blocks. */
    content: z.string(),
    text: z.string(),
    isError: z.boolean(),
    /** JSON text, null when the tool returned none. */
    structuredContent: z.string().nullable(),
    durationMs: z.number(),
    truncated: z.boolean(),
    at,
  }),
  McpToolCallFailed: z.object({ requestId, toolName: z.string(), error: errorSchema, durationMs: z.number(), at }),
  /** The caller stopped waiting (a flow run was stopped): the worker aborts the call (MCP `notifications/cancelled`). */
  McpToolCallCancelRequested: z.object({ requestId, reason: z.string(), at }),
  McpResourcesListRequested: z.object({ requestId, at }),
  McpResourcesListed: z.object({ requestId, resources: z.string(), resourceTemplates: z.string(), at }),
  McpResourceReadRequested: z.object({ requestId, uri: z.string(), timeoutMs: z.number().int().positive(), at }),
  McpResourceRead: z.object({ requestId, uri: z.string(), contents: z.string(), truncated: z.boolean(), durationMs: z.number(), at }),
  /** The outcome of a list or read request that could not be served. */
  McpRequestFailed: z.object({ requestId, operation: z.enum(['tools_list', 'resources_list', 'resource_read']), error: errorSchema, at }),
};

type Schemas = typeof mcpEventSchemas;
export type McpEventType = keyof Schemas;
export type McpEvent = { [K in McpEventType]: { type: K; data: z.infer<Schemas[K]> } }[McpEventType];
export type McpEventOf<K extends McpEventType> = Extract<McpEvent, { type: K }>;

/** Request events and the outcome types that answer each (matched by requestId). */
export const MCP_OUTCOMES: Partial<Record<McpEventType, McpEventType[]>> = {
  McpConnectRequested: ['McpServerConnected', 'McpServerConnectFailed'],
  McpDisconnectRequested: ['McpServerDisconnected'],
  McpToolsListRequested: ['McpToolsListed', 'McpRequestFailed'],
  McpToolCallRequested: ['McpToolCallCompleted', 'McpToolCallFailed'],
  McpResourcesListRequested: ['McpResourcesListed', 'McpRequestFailed'],
  McpResourceReadRequested: ['McpResourceRead', 'McpRequestFailed'],
};

export const mcpServerStreamId = (serverId: string) => `mcpserver-${serverId}`;
export const MCP_CATEGORY = 'mcpserver';
export const serverIdOfStream = (streamId: string) => streamId.slice(MCP_CATEGORY.length + 1);
