import type { Config } from '../infra/config/index.js';

/**
 * The MCP context's ports. The client (adapter: infra/mcp/client.ts over the official SDK) opens
 * one connection to one server with the service's rules applied; the runtime (adapter:
 * infra/mcp/runtime.ts) holds this process's connections, timers and background work; the read
 * model (adapter: projections/mcp.ts) answers the reconnector's scan.
 */

/** The settings the MCP handlers and consumers read (a slice of the configuration). */
export type McpSettings = Pick<
  Config,
  | 'ALLOW_PRIVATE_NETWORK'
  | 'MCP_STDIO_ALLOWLIST'
  | 'MCP_CALL_TIMEOUT_MS'
  | 'MCP_CONNECT_TIMEOUT_MS'
  | 'MCP_RECONNECT_BASE_MS'
  | 'MCP_RECONNECT_MAX_MS'
  | 'MCP_RECONNECT_STABLE_MS'
  | 'MCP_RECONNECT_SCAN_MS'
>;

export type McpTransportKind = 'stdio' | 'http' | 'sse';

/** How to reach a server, secrets opened (only the worker holds it this way). */
export interface McpEndpoint {
  transport: McpTransportKind;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
}

export interface McpServerIdentity {
  name: string;
  version: string;
  protocolVersion?: string;
  capabilities: Record<string, unknown>;
  transportUsed: McpTransportKind;
  instructions?: string;
}

export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

export interface McpToolResult {
  content: unknown[];
  text: string;
  isError: boolean;
  structuredContent?: unknown;
  durationMs: number;
  truncated: boolean;
}

export interface McpResourceList {
  resources: Array<{ uri: string; name?: string; mimeType?: string; description?: string }>;
  resourceTemplates: Array<{ uriTemplate: string; name?: string; mimeType?: string; description?: string }>;
}

export interface McpResourceContents {
  contents: Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>;
  truncated: boolean;
}

export interface McpCallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
  /** Attributes for the call's trace span (the run and node it serves); never arguments or results. */
  spanAttributes?: Record<string, string | number | undefined>;
}

/** One open connection. Errors carry a stable `code` (MCP_TIMEOUT, MCP_PROTOCOL_ERROR, OUTBOUND_…). */
export interface McpConnection {
  identity: McpServerIdentity;
  listTools(): Promise<McpToolInfo[]>;
  callTool(name: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpToolResult>;
  listResources(): Promise<McpResourceList>;
  readResource(uri: string, opts: { timeoutMs: number }): Promise<McpResourceContents>;
  close(): Promise<void>;
}

export interface McpConnectionHooks {
  /** The connection was lost without our close(). */
  onClose(reason: string): void;
  /** The server said its tool list changed (`notifications/tools/list_changed`, debounced). */
  onToolsChanged?(): void;
}

/** Opens connections with the operator's rules (stdio allowlist, outbound rule, limits) bound in. */
export interface McpClient {
  open(endpoint: McpEndpoint, hooks: McpConnectionHooks): Promise<McpConnection>;
}

/** An open connection and the id of the connect request that opened it (a loss names it). */
export interface HeldConnection {
  connectionId: string;
  connection: McpConnection;
  /** JSON of the tool list last recorded from this connection (a refresh that finds the same records nothing). */
  lastTools?: string;
}

export type LostListener = (serverId: string, connectionId: string, reason: string) => void;
export type ToolsChangedListener = (serverId: string, held: HeldConnection) => void;

/** What the MCP context keeps per process (open connections, background jobs, reconnect timers); closed with the services. */
export interface McpRuntime {
  readonly closed: boolean;
  get(serverId: string): HeldConnection | undefined;
  /** Opens (or joins the opening of) the server's connection; replaces a held one with another id. */
  open(serverId: string, connectionId: string, endpoint: McpEndpoint): Promise<HeldConnection>;
  /** Closes our connection to the server, if any (no loss is reported). */
  drop(serverId: string): Promise<void>;
  /** Who hears about connections lost without our close() (the worker's consumer). */
  onLost(listener: LostListener): void;
  /** Who hears that a server's tool list changed (`notifications/tools/list_changed`). */
  onToolsChanged(listener: ToolsChangedListener): void;
  /** Background work that must finish (or be cut short) before the stores close. */
  track(work: Promise<unknown>): void;
  /** One timer per key; a later schedule replaces it. */
  schedule(key: string, delayMs: number, fn: () => void): void;
  cancel(key: string): void;
  /**
   * Sleeps up to `ms`, or less when `wake(key)` is called in this process: a waiter for an outcome
   * that this process's worker appends is answered at once instead of at its next poll. Polling
   * stays the rule (the outcome may come from another process); this is only a shortcut.
   */
  nap(key: string, ms: number, signal?: AbortSignal): Promise<void>;
  wake(key: string): void;
  /** Closes every connection (stdio children die), clears timers, waits for background work. */
  close(): Promise<void>;
}

/** What the reconnector asks the read model: servers whose automatic reconnect is due (ids). */
export interface McpReadModel {
  dueReconnects(now: string, staleBefore: string): Promise<string[]>;
}
