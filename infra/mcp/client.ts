import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config/index.js';
import { McpClientError, toClientError } from './client-errors.js';
import { capResourceContents, capToolContent, type ResourceItem } from './client-limits.js';
import { openTransport, type OpenedClient } from './transport-open.js';
import { currentTraceparent, inSpan, markError, SpanKind, tracingEnabled } from '../../lib/tracing.js';

import type {
  McpCallOptions,
  McpClient,
  McpConnection,
  McpEndpoint,
  McpResourceContents,
  McpResourceList,
  McpServerIdentity,
  McpToolInfo,
  McpToolResult,
} from '../../ports/mcp.js';

export { McpClientError } from './client-errors.js';
export type { McpCallOptions, McpConnection, McpEndpoint, McpResourceContents, McpResourceList, McpServerIdentity, McpToolInfo, McpToolResult, McpTransportKind } from '../../ports/mcp.js';

/**
 * The MCP client wrapper: one connection to one MCP server over the official SDK, with the
 * service's rules applied (stdio allowlist, outbound rule, per-call timeouts, result size caps)
 * and a single `onClose(reason)` when the connection is lost without our close().
 * Connections are per process; the MCP context (worker role) owns them.
 */
export interface McpClientOptions {
  allowPrivateNetwork: boolean;
  stdioAllowlist: string[];
  connectTimeoutMs: number;
  maxResultBytes: number;
  /** 0 disables the keep-alive ping. */
  pingIntervalMs: number;
  onClose(reason: string): void;
  /** The server said its tool list changed (`notifications/tools/list_changed`, debounced). */
  onToolsChanged?(): void;
}

/** Progress tokens we hand out: their notifications are dispatched by us, never by the SDK. */
const PROGRESS_TOKEN_PREFIX = 'flow-service-progress-';
/** Several list_changed notifications in a burst (a server registering tools one by one) make one refresh. */
const TOOLS_CHANGED_DEBOUNCE_MS = 100;
type ProgressListener = (p: { progress: number; total?: number; message?: string }) => void;

/** A server that pages forever (a cursor loop) must not hang the caller. */
const MAX_PAGES = 100;
/** Pings that time out this many times in a row mean the server is gone (a refused one counts at once). */
const PING_TIMEOUTS_TO_GIVE_UP = 2;

/**
 * Lets this process read what is already waiting on its sockets and pipes. A timer that fires after
 * our event loop stalled (a long synchronous handler, a full GC, a starved CPU) runs before the
 * loop's poll phase reads data that arrived during the stall; a check-phase callback runs after it.
 * Two turns, so that data handed on through a promise chain (an HTTP body) is in too.
 */
const readWhatArrived = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

const optional = <K extends string>(key: K, value: unknown): Partial<Record<K, string>> => (typeof value === 'string' ? ({ [key]: value } as Record<K, string>) : {});

async function allPages<T>(fetchPage: (cursor?: string) => Promise<{ items: T[]; nextCursor?: string }>): Promise<T[]> {
  const out: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { items, nextCursor } = await fetchPage(cursor);
    out.push(...items);
    if (!nextCursor || seen.has(nextCursor)) break;
    seen.add(nextCursor);
    cursor = nextCursor;
  }
  return out;
}

const textOf = (content: unknown[]) =>
  content
    .filter((c): c is { type: 'text'; text: string } => (c as { type?: unknown })?.type === 'text' && typeof (c as { text?: unknown }).text === 'string')
    .map((c) => c.text)
    .join('\n');

class Connection implements McpConnection {
  readonly identity: McpServerIdentity;
  private readonly client: Client;
  private closedByUs = false;
  private lost = false;
  private pingTimer?: NodeJS.Timeout;
  private pingTimeouts = 0;
  private pinging = false;
  /** performance.now() of the last message read from the server: any message shows it is alive. */
  private lastHeardAt = performance.now();
  private shutdownDone?: Promise<void>;
  private readonly progressListeners = new Map<string, ProgressListener>();
  private toolsChangedTimer?: NodeJS.Timeout;

  constructor(
    private readonly opened: OpenedClient,
    private readonly options: McpClientOptions,
  ) {
    this.client = opened.client;
    const info = this.client.getServerVersion();
    const instructions = this.client.getInstructions();
    this.identity = {
      name: info?.name ?? 'unknown',
      version: info?.version ?? 'unknown',
      ...(opened.protocolVersion ? { protocolVersion: opened.protocolVersion } : {}),
      capabilities: { ...(this.client.getServerCapabilities() ?? {}) },
      transportUsed: opened.transportUsed,
      ...(instructions ? { instructions } : {}),
    };
    this.interceptProgress();
    if (options.onToolsChanged) {
      this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        clearTimeout(this.toolsChangedTimer);
        this.toolsChangedTimer = setTimeout(() => {
          if (this.closedByUs || this.lost) return;
          try {
            options.onToolsChanged?.();
          } catch {
            // the listener's failure is not the connection's
          }
        }, TOOLS_CHANGED_DEBOUNCE_MS);
        this.toolsChangedTimer.unref();
      });
    }
    // The client's onclose follows the transport's (stdio child exit, HTTP stream closed).
    this.client.onclose = () => this.markLost('the connection closed (transport closed)');
    // Transport errors are not always fatal (an SSE stream the SDK will reopen); a ping decides.
    this.client.onerror = () => void this.probe();
    if (options.pingIntervalMs > 0) {
      this.pingTimer = setInterval(() => void this.probe(), options.pingIntervalMs);
      this.pingTimer.unref();
    }
  }

  /**
   * Progress is dispatched synchronously, in the order the transport reads messages. The SDK
   * dispatches notifications one microtask later but settles a response at once and removes the
   * progress handler then, so a notification read in the same chunk as the result (the last step,
   * typically) would be lost. Our calls use tokens of our own, which we take out of the stream
   * before the SDK sees them: every notification sent before the result reaches the caller.
   */
  private interceptProgress(): void {
    const transport = this.opened.transport;
    const inner = transport.onmessage;
    transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
      this.lastHeardAt = performance.now();
      const m = message as { method?: unknown; params?: { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown } };
      const token = m.method === 'notifications/progress' ? m.params?.progressToken : undefined;
      if (typeof token === 'string' && token.startsWith(PROGRESS_TOKEN_PREFIX)) {
        const listener = this.progressListeners.get(token);
        const p = m.params!;
        if (listener && typeof p.progress === 'number') {
          listener({ progress: p.progress, ...(typeof p.total === 'number' ? { total: p.total } : {}), ...(typeof p.message === 'string' ? { message: p.message } : {}) });
        }
        return; // ours, even when late: never handed to the SDK (it would report an unknown token)
      }
      (inner as ((message: JSONRPCMessage, extra?: unknown) => void) | undefined)?.call(transport, message, extra);
    };
  }

  private get pingTimeoutMs() {
    return Math.max(1000, Math.min(this.options.pingIntervalMs || 10_000, 10_000));
  }

  /**
   * The keep-alive judges the server, not this process: the ping's timeout is a timer on our own
   * event loop, so after a stall of ours it fires before we read the answer already waiting in the
   * pipe (the soak's server went to `error` that way, issue 37). A timed-out ping therefore counts
   * only when, once what arrived has been read, the server has sent nothing since the ping left.
   */
  private async probe(): Promise<void> {
    if (this.closedByUs || this.lost || this.pinging) return;
    this.pinging = true;
    const sentAt = performance.now();
    try {
      await this.client.ping({ timeout: this.pingTimeoutMs });
      this.pingTimeouts = 0;
    } catch (err) {
      const mapped = toClientError(err, 'ping', { timeoutMs: this.pingTimeoutMs });
      if (mapped.code === 'MCP_TIMEOUT') {
        await readWhatArrived();
        if (this.closedByUs || this.lost) return;
        if (this.lastHeardAt >= sentAt) {
          this.pingTimeouts = 0;
          return;
        }
        if (++this.pingTimeouts < PING_TIMEOUTS_TO_GIVE_UP) return;
      }
      this.markLost(`the server stopped answering pings: ${mapped.message}`);
    } finally {
      this.pinging = false;
    }
  }

  private markLost(reason: string): void {
    if (this.closedByUs || this.lost) return;
    this.lost = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.toolsChangedTimer);
    // Release what is left (a stdio child that still runs, pooled sockets); never throws.
    this.shutdownDone = this.shutdown();
    try {
      this.options.onClose(reason);
    } catch {
      // the listener's failure is not the connection's
    }
  }

  private async shutdown(): Promise<void> {
    await Promise.resolve();
    const transport = this.opened.transport as { terminateSession?: () => Promise<void> };
    if (!this.lost && typeof transport.terminateSession === 'function') {
      // Streamable HTTP: end the session on the server (best effort, bounded).
      await Promise.race([transport.terminateSession().catch(() => {}), new Promise((r) => setTimeout(r, 1000).unref())]);
    }
    await this.client.close().catch(() => {});
    this.opened.release();
  }

  private ensureOpen(what: string): void {
    if (this.closedByUs || this.lost) throw new McpClientError('MCP_CONNECTION_CLOSED', `${what}: the connection is closed`);
  }

  private get listTimeoutMs() {
    return Math.max(this.options.connectTimeoutMs, 5000);
  }

  async listTools(): Promise<McpToolInfo[]> {
    this.ensureOpen('listing tools');
    if (!this.identity.capabilities.tools) return [];
    try {
      const tools = await allPages(async (cursor) => {
        const page = await this.client.listTools(cursor ? { cursor } : {}, { timeout: this.listTimeoutMs });
        return { items: page.tools, nextCursor: page.nextCursor };
      });
      return tools.map((t) => ({
        name: t.name,
        ...optional('title', t.title),
        ...optional('description', t.description),
        inputSchema: t.inputSchema,
        ...(t.outputSchema !== undefined ? { outputSchema: t.outputSchema } : {}),
        ...(t.annotations !== undefined ? { annotations: t.annotations } : {}),
      }));
    } catch (err) {
      throw toClientError(err, 'listing tools', { timeoutMs: this.listTimeoutMs });
    }
  }

  /**
   * A CLIENT span per call, named as the MCP conventions say (`tools/call get-sum`); its trace context also rides in the
   * request's `_meta` (`traceparent`), where the MCP semantic conventions put it for any transport.
   */
  callTool(name: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpToolResult> {
    if (!tracingEnabled()) return this.callToolOnce(name, args, opts);
    const attributes = { ...opts.spanAttributes, 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'mcp.method.name': 'tools/call', 'mcp.server.name': this.identity.name };
    return inSpan(`tools/call ${name}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const result = await this.callToolOnce(name, args, opts);
      if (result.isError) {
        span?.setAttribute('error.type', 'tool_error');
        markError(span!, 'the tool answered isError');
      }
      return result;
    });
  }

  private async callToolOnce(name: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpToolResult> {
    this.ensureOpen(`calling ${name}`);
    const started = performance.now();
    // A progress token is sent only when someone listens (see interceptProgress).
    const progressToken = opts.onProgress ? `${PROGRESS_TOKEN_PREFIX}${randomUUID()}` : undefined;
    if (progressToken) {
      this.progressListeners.set(progressToken, (p) => {
        try {
          opts.onProgress?.(p);
        } catch {
          // a listener's failure must not fail the call
        }
      });
    }
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      const traceparent = currentTraceparent();
      const meta = { ...(progressToken ? { progressToken } : {}), ...(traceparent ? { traceparent } : {}) };
      result = await this.client.callTool({ name, arguments: args, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) }, undefined, { timeout: opts.timeoutMs, signal: opts.signal });
    } catch (err) {
      throw toClientError(err, `calling ${name}`, { timeoutMs: opts.timeoutMs, signal: opts.signal });
    } finally {
      if (progressToken) this.progressListeners.delete(progressToken);
    }
    const durationMs = Math.round((performance.now() - started) * 100) / 100;
    // A server on the pre-2024-11 protocol answers {toolResult}; show it as one text item.
    const rawContent = Array.isArray(result.content) ? (result.content as unknown[]) : [{ type: 'text', text: JSON.stringify(result.toolResult ?? null) }];
    const capped = capToolContent(rawContent, result.structuredContent, this.options.maxResultBytes);
    return {
      content: capped.content,
      text: textOf(capped.content),
      isError: result.isError === true,
      ...(capped.structuredContent !== undefined ? { structuredContent: capped.structuredContent } : {}),
      durationMs,
      truncated: capped.truncated,
    };
  }

  async listResources(): Promise<McpResourceList> {
    this.ensureOpen('listing resources');
    if (!this.identity.capabilities.resources) return { resources: [], resourceTemplates: [] };
    try {
      const resources = await allPages(async (cursor) => {
        const page = await this.client.listResources(cursor ? { cursor } : {}, { timeout: this.listTimeoutMs });
        return { items: page.resources, nextCursor: page.nextCursor };
      });
      const templates = await allPages(async (cursor) => {
        const page = await this.client.listResourceTemplates(cursor ? { cursor } : {}, { timeout: this.listTimeoutMs });
        return { items: page.resourceTemplates, nextCursor: page.nextCursor };
      });
      return {
        resources: resources.map((r) => ({ uri: r.uri, ...optional('name', r.name), ...optional('mimeType', r.mimeType), ...optional('description', r.description) })),
        resourceTemplates: templates.map((t) => ({
          uriTemplate: t.uriTemplate,
          ...optional('name', t.name),
          ...optional('mimeType', t.mimeType),
          ...optional('description', t.description),
        })),
      };
    } catch (err) {
      throw toClientError(err, 'listing resources', { timeoutMs: this.listTimeoutMs });
    }
  }

  async readResource(uri: string, opts: { timeoutMs: number }): Promise<McpResourceContents> {
    this.ensureOpen(`reading ${uri}`);
    let result: Awaited<ReturnType<Client['readResource']>>;
    try {
      result = await this.client.readResource({ uri }, { timeout: opts.timeoutMs });
    } catch (err) {
      throw toClientError(err, `reading ${uri}`, { timeoutMs: opts.timeoutMs });
    }
    const items: ResourceItem[] = result.contents.map((c) => {
      const item = c as { uri: string; mimeType?: unknown; text?: unknown; blob?: unknown };
      return { uri: item.uri, ...optional('mimeType', item.mimeType), ...optional('text', item.text), ...optional('blob', item.blob) };
    });
    return capResourceContents(items, this.options.maxResultBytes);
  }

  async close(): Promise<void> {
    if (this.closedByUs) return;
    this.closedByUs = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.toolsChangedTimer);
    this.shutdownDone ??= this.shutdown();
    try {
      await this.shutdownDone;
    } catch {
      // close never throws
    }
  }
}

/** Opens a connection (handshake included) or throws McpClientError; nothing is left running on failure. */
export async function openMcpConnection(endpoint: McpEndpoint, options: McpClientOptions): Promise<McpConnection> {
  const opened = await openTransport(endpoint, {
    allowPrivateNetwork: options.allowPrivateNetwork,
    stdioAllowlist: options.stdioAllowlist,
    connectTimeoutMs: options.connectTimeoutMs,
    // Results are cut to maxResultBytes after they arrived; a message far beyond that is refused.
    maxMessageBytes: Math.max(16 * 1024 * 1024, options.maxResultBytes * 4),
  });
  return new Connection(opened, options);
}

/**
 * The McpClient port with the operator's rules and limits bound in (the container wires it). The
 * settings are read at each open: a connect after the operator changed them applies the new ones.
 */
export function createMcpClient(config: Pick<Config, 'ALLOW_PRIVATE_NETWORK' | 'MCP_STDIO_ALLOWLIST' | 'MCP_CONNECT_TIMEOUT_MS' | 'MCP_MAX_RESULT_BYTES' | 'MCP_PING_INTERVAL_MS'>): McpClient {
  return {
    open: (endpoint, hooks) =>
      openMcpConnection(endpoint, {
        allowPrivateNetwork: config.ALLOW_PRIVATE_NETWORK,
        stdioAllowlist: config.MCP_STDIO_ALLOWLIST,
        connectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS,
        maxResultBytes: config.MCP_MAX_RESULT_BYTES,
        pingIntervalMs: config.MCP_PING_INTERVAL_MS,
        onClose: hooks.onClose,
        onToolsChanged: hooks.onToolsChanged,
      }),
  };
}
