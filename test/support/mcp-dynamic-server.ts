/**
 * A small MCP server over stdio built on the SDK's own McpServer (the real protocol, not a fake
 * of our code), for what server-everything cannot do on demand: change its tool list while
 * connected. `add-tool {name}` registers a tool named `name`; the SDK's server then sends
 * `notifications/tools/list_changed` to the client by itself.
 * With `EXTRA_TOOLS=n` it starts with n more tools (`tool-1`…); with `TOOLS_PAGE_SIZE=k` its
 * tools/list answers pages of k tools with a `nextCursor` (the SDK's McpServer never pages).
 * Run with: node --import tsx test/support/mcp-dynamic-server.ts
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'dynamic-tools', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });

server.registerTool('add-tool', { description: 'registers a new tool', inputSchema: { name: z.string() } }, ({ name }) => {
  server.registerTool(name, { description: `added at run time` }, () => ({ content: [{ type: 'text', text: `${name} ran` }] }));
  return { content: [{ type: 'text', text: `added ${name}` }] };
});

for (let i = 1; i <= Number(process.env.EXTRA_TOOLS ?? 0); i++) {
  server.registerTool(`tool-${i}`, { description: `extra tool ${i}` }, () => ({ content: [{ type: 'text', text: `tool-${i} ran` }] }));
}

const pageSize = Number(process.env.TOOLS_PAGE_SIZE ?? 0);
if (pageSize > 0) {
  // Wraps the McpServer's own tools/list handler (kept in the protocol's handler map) to page it.
  type Handler = (request: { params?: { cursor?: string } }, extra: unknown) => Promise<{ tools: unknown[] }>;
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  const original = handlers.get('tools/list')!;
  handlers.set('tools/list', async (request, extra) => {
    const all = (await original(request, extra)).tools;
    const start = Number(request.params?.cursor ?? 0);
    const end = start + pageSize;
    return { tools: all.slice(start, end), ...(end < all.length ? { nextCursor: String(end) } : {}) };
  });
}

await server.connect(new StdioServerTransport());
