import { DomainError, type ErrorKind } from '../domain/shared/decider.js';

/** HTTP status for an error code an MCP outcome carries (the worker's client errors among them). */
export function mcpErrorKind(code: string): ErrorKind {
  if (code === 'MCP_NOT_CONNECTED') return 'conflict';
  if (code === 'MCP_TIMEOUT' || code === 'MCP_REQUEST_EXPIRED' || code === 'MCP_NO_ANSWER') return 'timeout';
  if (code === 'MCP_STDIO_NOT_ALLOWED' || code === 'OUTBOUND_ADDRESS_REFUSED') return 'forbidden';
  if (code === 'OUTBOUND_INVALID_URL' || code === 'MCP_INVALID_ARGUMENTS') return 'invalid';
  if (code === 'MCP_SERVER_NOT_FOUND') return 'not_found';
  return 'upstream';
}

export const mcpError = (code: string, message: string, details?: Record<string, unknown>) => new DomainError(code, message, mcpErrorKind(code), details);

export const notConnected = (state: string) =>
  new DomainError('MCP_NOT_CONNECTED', `the MCP server is ${state}; connect it first (POST /api/mcp/servers/{serverId}/connect)`, 'conflict', { state });

/** A call the worker answered with a failure; `position` lets the route settle (the failure is in the history). */
export class McpOutcomeError extends DomainError {
  constructor(code: string, message: string, details: Record<string, unknown>, readonly position: number) {
    super(code, message, mcpErrorKind(code), details);
  }
}
