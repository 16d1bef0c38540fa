/**
 * The key-value store integration's port (adapter: infra/kv/): checking that a Redis server
 * answers, and how the service launches `@modelcontextprotocol/server-redis` for it.
 */
export interface KvCheckResult {
  /** The URL with the password masked. */
  url: string;
  host: string;
  port: number;
  tls: boolean;
  db: number;
  /** The IP address connected to. */
  address: string;
  serverVersion: string | null;
  mode: string | null;
  /** Round trip of one PING on the open connection. */
  latencyMs: number;
  /** TCP (+TLS) connect, HELLO/AUTH and SELECT. */
  connectMs: number;
}

/** A stdio command line: what an MCP server registration names. */
export interface StdioLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface KvChecker {
  /** Connect, authenticate, PING (outbound rule and timeout bound in); failures are DomainErrors with KV_* codes. */
  check(url: string): Promise<KvCheckResult>;
  /** The stdio launch of server-redis for this URL (the URL goes in the env, never in args). */
  serverRedisLaunch(url: string): StdioLaunch;
}
