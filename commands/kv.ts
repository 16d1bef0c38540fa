import { parseRedisUrl } from '../domain/kv/index.js';
import { isStdioCommandAllowed } from '../domain/mcp/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Principal } from '../domain/shared/principal.js';
import type { KvChecker } from '../ports/kv.js';
import type { CommandContext } from './handle.js';
import { registerMcpServer, type McpRegistryPorts } from './mcp.js';

/**
 * POST /kv/configure-mcp: a Redis connection plugged in as a stdio MCP server running
 * @modelcontextprotocol/server-redis. The operator's allowlist is checked first (no connection
 * attempt for a registration that cannot run), then the connection, then a regular registration
 * (the URL goes into the env, sealed like any other).
 */
export interface KvMcpPorts extends McpRegistryPorts {
  kv: KvChecker;
}

export async function configureKvMcpServer(
  ports: KvMcpPorts,
  context: CommandContext,
  principal: Principal,
  input: { url: string; name?: string; autoReconnect?: boolean },
): Promise<{ serverId: string; position: number; streamId: string }> {
  const target = parseRedisUrl(input.url);
  const launch = ports.kv.serverRedisLaunch(input.url.trim());
  if (!isStdioCommandAllowed(launch.command, ports.config.MCP_STDIO_ALLOWLIST)) {
    throw new DomainError('MCP_STDIO_NOT_ALLOWED', `the key-value MCP server runs ${launch.command} (node), which is not on the operator's allowlist (MCP_STDIO_ALLOWLIST)`, 'forbidden', {
      command: launch.command,
    });
  }
  await ports.kv.check(input.url);
  return registerMcpServer(ports, context, principal, {
    name: input.name ?? `Redis ${target.host}:${target.port}`,
    transport: 'stdio',
    command: launch.command,
    args: launch.args,
    env: launch.env,
    autoReconnect: input.autoReconnect ?? false,
  });
}
