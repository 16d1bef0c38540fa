import { DomainError } from '../shared/decider.js';

/** Who may see a server: the flows rule (same organization and workspace; personal ones are their owner's). */
export interface McpScope {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

export function isMcpServerVisibleTo(server: { ownerId: string; orgId: string | null; workspaceId: string | null }, scope: McpScope): boolean {
  if (server.orgId !== scope.orgId || server.workspaceId !== scope.workspaceId) return false;
  return server.orgId !== null || server.ownerId === scope.userId;
}

/** Another tenant's server answers exactly as a missing one (404, never 403). */
export const mcpServerNotFound = () => new DomainError('MCP_SERVER_NOT_FOUND', 'MCP server not found', 'not_found');

/** Throws MCP_SERVER_NOT_FOUND unless the server exists, is not deleted and, when a scope is given, is visible to it. */
export function requireMcpServer(server: { exists: boolean; deleted: boolean; ownerId: string; orgId: string | null; workspaceId: string | null }, scope: McpScope | null | undefined): void {
  if (!server.exists || server.deleted) throw mcpServerNotFound();
  if (scope && !isMcpServerVisibleTo(server, scope)) throw mcpServerNotFound();
}
