/**
 * Which commands a stdio MCP server may run. A stdio server is a command run on the service's
 * host, so only commands the operator listed (MCP_STDIO_ALLOWLIST) may be started. What the child
 * inherits (its environment) is the adapter's business: infra/mcp/stdio-policy.ts.
 */

/** The last path segment, as POSIX `basename` gives it (no `node:path`: the domain stays free of Node). */
function basenameOf(command: string): string {
  const trimmed = command.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/**
 * An allowlist entry matches the command exactly, or, when the entry has no '/', the command's
 * basename (entry `node` allows `node` and `/usr/bin/node`; entry `/usr/bin/node` allows only
 * that path). An empty allowlist allows nothing.
 */
export function isStdioCommandAllowed(command: string, allowlist: readonly string[]): boolean {
  if (typeof command !== 'string' || command.trim() === '' || command.includes('\0')) return false;
  const base = basenameOf(command);
  return allowlist.some((raw) => {
    const entry = raw.trim();
    if (entry === '') return false;
    if (entry === command) return true;
    return !entry.includes('/') && entry === base;
  });
}
