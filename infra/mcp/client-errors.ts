import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { OutboundError } from '../http/outbound.js';

/**
 * The one error type the MCP client wrapper throws. Codes are stable; the MCP context maps them
 * to HTTP answers and records them as a server's last error:
 * - MCP_CONNECT_FAILED: the handshake did not complete (process exited, HTTP refused, bad answer);
 * - MCP_TIMEOUT: no answer within the call's (or the handshake's) time limit;
 * - MCP_ABORTED: the caller's AbortSignal fired;
 * - MCP_STDIO_NOT_ALLOWED: the stdio command is not on MCP_STDIO_ALLOWLIST (nothing was spawned);
 * - MCP_INVALID_ENDPOINT: the endpoint lacks a command or a valid URL;
 * - MCP_PROTOCOL_ERROR: the server answered a JSON-RPC error (unknown tool, invalid params, …);
 * - MCP_CONNECTION_CLOSED: the connection is gone (closed by us, or lost);
 * - OUTBOUND_*: the URL broke the outbound rule (infra/http/outbound.ts), e.g. OUTBOUND_ADDRESS_REFUSED.
 */
export class McpClientError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'McpClientError';
  }
}

/** Masks `user:password@` in URLs (server-redis prints its URL on stderr; errors quote stderr). */
export function maskCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)([^\s/@:]*):([^\s/@]*)@/gi, (_m, scheme: string, user: string) => `${scheme}${user}:***@`);
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || (err as { code?: unknown }).code === 'ABORT_ERR');
}

/** Turns whatever the SDK or the transport threw during a request into an McpClientError. */
export function toClientError(err: unknown, what: string, context: { timeoutMs?: number; signal?: AbortSignal } = {}): McpClientError {
  if (err instanceof McpClientError) return err;
  if (err instanceof OutboundError) return new McpClientError(err.code, err.message, err.details);
  if (context.signal?.aborted) return new McpClientError('MCP_ABORTED', `${what} was aborted`);
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) {
      return new McpClientError('MCP_TIMEOUT', `${what}: no answer within ${context.timeoutMs ?? '?'} ms`, { timeoutMs: context.timeoutMs });
    }
    if (err.code === ErrorCode.ConnectionClosed) return new McpClientError('MCP_CONNECTION_CLOSED', `${what}: the connection closed`);
    return new McpClientError('MCP_PROTOCOL_ERROR', `${what}: ${maskCredentials(err.message)}`, { mcpCode: err.code });
  }
  if (isAbortError(err)) return new McpClientError('MCP_ABORTED', `${what} was aborted`);
  const message = err instanceof Error ? err.message : String(err);
  if (/not connected/i.test(message)) return new McpClientError('MCP_CONNECTION_CLOSED', `${what}: the connection is closed`);
  return new McpClientError('MCP_PROTOCOL_ERROR', `${what}: ${maskCredentials(message)}`);
}
