import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerEndpoint, McpToolHost } from '../../ports/mcp-server.js';

/**
 * The service's own MCP server (`/api/mcp`) on the SDK's low-level `Server` (tools are the
 * caller's exposed flows, described by JSON Schemas, not zod) and `StreamableHTTPServerTransport`
 * in stateless mode: no session id, a new server and transport per POST, closed when the response
 * is. Progress of a tool call goes out as `notifications/progress` on the request's SSE stream.
 */
export function createMcpServerEndpoint(info: { name: string; version: string }): McpServerEndpoint {
  return {
    async handle(req, res, body, host: McpToolHost) {
      const server = new Server(info, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: (await host.listTools()).map((t) => ({ name: t.name, ...(t.title ? { title: t.title } : {}), description: t.description, inputSchema: t.inputSchema as { type: 'object' } })),
      }));
      server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
        const token = request.params._meta?.progressToken;
        const progress =
          token === undefined
            ? null
            : (step: { progress: number; total?: number; message?: string }) =>
                extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...step } });
        const result = await host.callTool(request.params.name, request.params.arguments ?? {}, progress, extra.signal);
        if (!result) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${request.params.name}`);
        return { content: [{ type: 'text' as const, text: result.text }], structuredContent: result.structuredContent, isError: result.isError };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close().catch(() => undefined);
        void server.close().catch(() => undefined);
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
  };
}
