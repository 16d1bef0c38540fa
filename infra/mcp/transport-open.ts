import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { OutboundError, parseHttpUrl } from '../http/outbound.js';
import { McpClientError, maskCredentials, toClientError } from './client-errors.js';
import { isStdioCommandAllowed } from '../../domain/mcp/stdio-policy.js';
import { stdioEnvironment } from './stdio-policy.js';
import { guardedFetch, type GuardedFetch } from './transport-fetch.js';
import type { McpEndpoint, McpTransportKind } from '../../ports/mcp.js';

/**
 * Opening a transport and running the MCP handshake on it, per endpoint kind:
 * - stdio: the allowlist is checked before anything is spawned; the child gets only the named
 *   environment plus a safe minimum; its stderr is kept (last 4 KiB, credentials masked) to
 *   explain a child that dies during the handshake.
 * - http: Streamable HTTP first; when the server answers the initialize POST with a 4xx, the
 *   SDK's backwards-compatibility pattern: a fresh client over the deprecated HTTP+SSE transport
 *   on the same URL.
 * - sse: HTTP+SSE directly.
 * HTTP and SSE go through the guarded fetch (outbound rule, pinned addresses).
 */
/** The endpoint as the port declares it (secrets opened). */
export type EndpointSpec = McpEndpoint;
export type TransportKind = McpTransportKind;

export interface OpenSpec {
  allowPrivateNetwork: boolean;
  stdioAllowlist: string[];
  connectTimeoutMs: number;
  /** Largest single message accepted from the server (stdio line, HTTP POST answer). */
  maxMessageBytes: number;
}

export interface OpenedClient {
  client: Client;
  transport: Transport;
  transportUsed: TransportKind;
  protocolVersion?: string;
  /** The stdio child's pid. */
  pid?: number;
  /** Releases what the transport kept beyond the client (sockets of the guarded fetch). */
  release(): void;
}

const CLIENT_INFO = { name: 'flow-service', version: '1.0.0' };
const STDERR_TAIL_BYTES = 4096;

function newClient(): Client {
  return new Client(CLIENT_INFO, { capabilities: {} });
}

/** Remembers the negotiated protocol version: the client hands it to the transport after initialize. */
function captureProtocolVersion(transport: Transport): { get(): string | undefined } {
  let version: string | undefined;
  const original = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v: string) => {
    version = v;
    original?.(v);
  };
  return { get: () => version };
}

/** Rejects with MCP_TIMEOUT when the handshake (including an SSE stream that never opens) is too slow. */
async function withDeadline<T>(work: Promise<T>, timeoutMs: number, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new McpClientError('MCP_TIMEOUT', `the MCP handshake did not complete within ${timeoutMs} ms`, { timeoutMs, phase: 'connect' }));
    }, timeoutMs);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function handshake(transport: Transport, timeoutMs: number): Promise<{ client: Client; protocolVersion?: string }> {
  const client = newClient();
  const version = captureProtocolVersion(transport);
  try {
    await withDeadline(client.connect(transport, { timeout: timeoutMs }), timeoutMs, () => void client.close().catch(() => {}));
  } catch (err) {
    await client.close().catch(() => {});
    throw err;
  }
  return { client, protocolVersion: version.get() };
}

function connectFailed(err: unknown, what: string, extra = ''): McpClientError {
  if (err instanceof McpClientError && err.code !== 'MCP_CONNECTION_CLOSED' && err.code !== 'MCP_PROTOCOL_ERROR') return err;
  if (err instanceof OutboundError) return new McpClientError(err.code, err.message, err.details);
  const mapped = toClientError(err, what);
  if (mapped.code.startsWith('OUTBOUND_') || mapped.code === 'MCP_TIMEOUT') return mapped;
  const message = err instanceof Error ? err.message : String(err);
  return new McpClientError('MCP_CONNECT_FAILED', `${what} failed: ${maskCredentials(message)}${extra}`, { cause: (err as NodeJS.ErrnoException)?.code });
}

async function openStdio(endpoint: EndpointSpec, spec: OpenSpec): Promise<OpenedClient> {
  const command = endpoint.command ?? '';
  if (!command) throw new McpClientError('MCP_INVALID_ENDPOINT', 'a stdio server needs a command');
  if (!isStdioCommandAllowed(command, spec.stdioAllowlist)) {
    throw new McpClientError('MCP_STDIO_NOT_ALLOWED', `the command ${command} is not on the stdio allowlist (MCP_STDIO_ALLOWLIST)`, { command });
  }
  const transport = new StdioClientTransport({ command, args: endpoint.args ?? [], env: stdioEnvironment(endpoint.env ?? {}), stderr: 'pipe', maxBufferSize: spec.maxMessageBytes });
  let stderrTail = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
  });
  try {
    const { client, protocolVersion } = await handshake(transport, spec.connectTimeoutMs);
    return { client, transport, transportUsed: 'stdio', protocolVersion, pid: transport.pid ?? undefined, release() {} };
  } catch (err) {
    await transport.close().catch(() => {});
    const tail = maskCredentials(stderrTail.trim()).slice(-1000);
    throw connectFailed(err, `starting ${command}`, tail ? ` (stderr: ${tail})` : '');
  }
}

function parseUrl(raw: string | undefined): URL {
  if (!raw) throw new McpClientError('MCP_INVALID_ENDPOINT', 'an http or sse server needs a url');
  const url = parseHttpUrl(raw);
  if (url === 'invalid') throw new McpClientError('OUTBOUND_INVALID_URL', 'the server url is not a valid URL');
  if (url === 'not_http') throw new McpClientError('OUTBOUND_INVALID_URL', 'the server url must be http or https');
  return url;
}

async function openSse(url: URL, headers: Record<string, string>, guard: GuardedFetch, spec: OpenSpec): Promise<OpenedClient> {
  const transport = new SSEClientTransport(url, { fetch: guard.fetch, requestInit: { headers } });
  try {
    const { client, protocolVersion } = await handshake(transport, spec.connectTimeoutMs);
    return { client, transport, transportUsed: 'sse', protocolVersion, release: () => guard.destroy() };
  } catch (err) {
    await transport.close().catch(() => {});
    throw connectFailed(err, `connecting over SSE to ${url.origin}`);
  }
}

function isClientErrorStatus(err: unknown): boolean {
  const code = (err as StreamableHTTPError)?.code;
  return err instanceof StreamableHTTPError && typeof code === 'number' && code >= 400 && code < 500;
}

async function openHttp(endpoint: EndpointSpec, spec: OpenSpec): Promise<OpenedClient> {
  const url = parseUrl(endpoint.url);
  const headers = endpoint.headers ?? {};
  const guard = guardedFetch(spec.allowPrivateNetwork, spec.maxMessageBytes);
  try {
    await guard.check(url);
    if (endpoint.transport === 'sse') return await openSse(url, headers, guard, spec);
    const transport = new StreamableHTTPClientTransport(url, { fetch: guard.fetch, requestInit: { headers } });
    let status: number | undefined;
    try {
      const { client, protocolVersion } = await handshake(transport, spec.connectTimeoutMs);
      return { client, transport, transportUsed: 'http', protocolVersion, release: () => guard.destroy() };
    } catch (err) {
      await transport.close().catch(() => {});
      if (!isClientErrorStatus(err)) throw connectFailed(err, `connecting over Streamable HTTP to ${url.origin}`);
      status = (err as StreamableHTTPError).code;
    }
    try {
      return await openSse(url, headers, guard, spec);
    } catch (err) {
      // Both failed: say so, the first answer (401, 404…) is often the useful one.
      const mapped = connectFailed(err, `connecting over SSE to ${url.origin}`);
      if (mapped.code !== 'MCP_CONNECT_FAILED') throw mapped;
      throw new McpClientError('MCP_CONNECT_FAILED', `Streamable HTTP answered ${status} and the SSE fallback failed too: ${mapped.message}`, { ...mapped.details, httpStatus: status });
    }
  } catch (err) {
    guard.destroy();
    throw connectFailed(err, `connecting to ${url.origin}`);
  }
}

export function openTransport(endpoint: EndpointSpec, spec: OpenSpec): Promise<OpenedClient> {
  if (endpoint.transport === 'stdio') return openStdio(endpoint, spec);
  if (endpoint.transport === 'http' || endpoint.transport === 'sse') return openHttp(endpoint, spec);
  return Promise.reject(new McpClientError('MCP_INVALID_ENDPOINT', `unknown transport ${String(endpoint.transport)}`));
}
