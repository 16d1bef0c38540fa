import type { IncomingMessage, ServerResponse } from 'node:http';

/** One tool the service's MCP server offers (`/api/mcp`): an exposed flow. */
export interface McpServedTool {
  name: string;
  title?: string;
  description: string;
  /** A JSON Schema of an object. */
  inputSchema: Record<string, unknown>;
}

/** A step of a tool call's progress (MCP `notifications/progress`). */
export interface McpToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface McpServedToolResult {
  text: string;
  structuredContent: Record<string, unknown>;
  isError: boolean;
}

/** The caller's tools, for one request: built per request by the route, for the authenticated principal. */
export interface McpToolHost {
  listTools(): Promise<McpServedTool[]>;
  /**
   * Calls a tool; null when the caller has no tool by that name (the server answers an MCP error
   * naming nothing else). `progress` is null when the client sent no progress token.
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    progress: ((step: McpToolProgress) => Promise<void>) | null,
    signal: AbortSignal,
  ): Promise<McpServedToolResult | null>;
}

/**
 * The MCP server side of Streamable HTTP, stateless: each POST gets its own server and transport,
 * answers on the raw Node request/response (the route has switched Koa's response off) and is
 * closed with the response. `body` is the JSON-RPC message(s) the app's body parser already read.
 */
export interface McpServerEndpoint {
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, host: McpToolHost): Promise<void>;
}
