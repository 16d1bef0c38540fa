import { z } from 'zod';
import { configureKvMcpServer } from '../../commands/kv.js';
import { KV_PRESETS, KV_URL_MAX_LENGTH } from '../../domain/kv/index.js';
import { MCP_LIMITS } from '../../domain/mcp/index.js';
import { defineRoute } from '../route.js';
import { serverReply, settledServerReply } from './mcp-support.js';

/**
 * Key-value store integration: check a Redis connection, and plug it in as an MCP server
 * (server-redis over stdio) so flows can use it through mcp_tool nodes. Nothing is stored by
 * validate; configure-mcp stores a regular MCP server registration (the URL encrypted in its env).
 */
const tag = 'Key-value store';

const urlField = z.string().min(1).max(KV_URL_MAX_LENGTH).describe('redis://[user][:password]@host[:port][/db] or rediss://… (TLS)');

const checkOut = z.object({
  url: z.string().describe('the URL with the password masked'),
  host: z.string(),
  port: z.number(),
  tls: z.boolean(),
  db: z.number(),
  address: z.string().describe('the IP address connected to'),
  serverVersion: z.string().nullable(),
  mode: z.string().nullable().describe('standalone, cluster or sentinel (INFO server)'),
  latencyMs: z.number().describe('round trip of one PING'),
  connectMs: z.number().describe('connect, TLS, authentication and SELECT'),
});

const kvErrors = 'KV_INVALID_URL (field body.url), KV_CONNECTION_REFUSED, KV_AUTH_FAILED, KV_TIMEOUT, KV_DNS_FAILED, KV_TLS_FAILED, KV_REJECTED, KV_NOT_REDIS, KV_CONNECTION_FAILED, VALIDATION_FAILED';

export const kvRoutes = [
  defineRoute({
    method: 'POST',
    path: '/kv/validate',
    operationId: 'validateKvConnection',
    summary: 'validate a key-value store (Redis) connection: connect, authenticate, PING; answers the server version and latency',
    tag,
    auth: 'bearer',
    permission: 'edit_resources',
    body: z.strictObject({ url: urlField }),
    responses: {
      200: { description: 'the connection works', schema: z.object({ success: z.literal(true), valid: z.literal(true) }).extend(checkOut.shape) },
      400: { description: kvErrors },
      401: { description: 'UNAUTHENTICATED' },
      403: { description: 'OUTBOUND_ADDRESS_REFUSED (private or loopback host while ALLOW_PRIVATE_NETWORK=false), FORBIDDEN' },
    },
    async handler({ body, services }) {
      const result = await services.kv.check(body.url);
      return { status: 200, body: { success: true, valid: true, ...result } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/kv/configure-mcp',
    operationId: 'configureKvMcpServer',
    summary: 'validate a Redis connection, then register it as a stdio MCP server running @modelcontextprotocol/server-redis (tools set, get, delete, list)',
    tag,
    auth: 'bearer',
    permission: 'edit_resources',
    body: z.strictObject({
      url: urlField,
      name: z.string().trim().min(1).max(MCP_LIMITS.name).optional().describe('defaults to "Redis <host>:<port>"'),
      autoReconnect: z.boolean().optional(),
    }),
    responses: {
      201: { description: 'registered (state disconnected; connect it with POST /mcp/servers/{serverId}/connect)', schema: serverReply },
      400: { description: kvErrors },
      401: { description: 'UNAUTHENTICATED' },
      403: { description: 'MCP_STDIO_NOT_ALLOWED (node is not on MCP_STDIO_ALLOWLIST), OUTBOUND_ADDRESS_REFUSED, FORBIDDEN' },
    },
    async handler(input) {
      const { body, principal, services, command } = input;
      const { serverId, position } = await configureKvMcpServer(services, command, principal!, body);
      return settledServerReply(input, serverId, position, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/kv/presets',
    operationId: 'listKvPresets',
    summary: 'predefined key-value store connections (URL templates with <placeholders>)',
    tag,
    auth: 'bearer',
    responses: {
      200: {
        description: 'the presets',
        schema: z.object({
          success: z.literal(true),
          presets: z.array(
            z.object({
              id: z.string(),
              name: z.string(),
              urlTemplate: z.string(),
              description: z.string(),
              tls: z.boolean(),
              requiresPassword: z.boolean(),
              placeholders: z.array(z.string()),
            }),
          ),
        }),
      },
      401: { description: 'UNAUTHENTICATED' },
    },
    async handler() {
      return { status: 200, body: { success: true, presets: KV_PRESETS } };
    },
  }),
];
