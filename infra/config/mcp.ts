import { z } from 'zod';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Environment variables of the mcp context (spread into configSchema; README's configuration table mirrors it). */
export const mcpConfigShape = {
  /** Commands a stdio MCP server may run (comma-separated): an entry matches the command exactly or, without '/', its basename. Empty: no stdio server. */
  MCP_STDIO_ALLOWLIST: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((c) => c.trim()).filter(Boolean) : [])),
  /** Default and upper bound of one tool call or resource read. */
  MCP_CALL_TIMEOUT_MS: positiveInt(60_000),
  MCP_CONNECT_TIMEOUT_MS: positiveInt(15_000),
  /** Tool results and resource contents above this are truncated (flag `truncated`). */
  MCP_MAX_RESULT_BYTES: positiveInt(256 * 1024),
  /** How often an open connection is pinged to notice a peer that went away. */
  MCP_PING_INTERVAL_MS: positiveInt(15_000),
  MCP_RECONNECT_BASE_MS: positiveInt(1_000),
  MCP_RECONNECT_MAX_MS: positiveInt(60_000),
  /** A connection that lived this long before it was lost starts its backoff afresh. */
  MCP_RECONNECT_STABLE_MS: positiveInt(60_000),
  /** The worker looks for flagged servers whose reconnect is due this often (restarts, missed timers). */
  MCP_RECONNECT_SCAN_MS: positiveInt(5_000),
} satisfies Record<string, z.ZodType>;
