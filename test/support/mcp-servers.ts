import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Real MCP servers from npm for the MCP tests: server-everything over stdio and over Streamable
 * HTTP (a child process on a loopback port), server-memory over stdio. No fakes.
 */
const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

export const EVERYTHING_JS = join(packageDir('@modelcontextprotocol/server-everything'), 'dist', 'index.js');
export const MEMORY_JS = join(packageDir('@modelcontextprotocol/server-memory'), 'dist', 'index.js');

/** Service env for MCP tests: node allowed for stdio, loopback allowed, short ping and backoff. */
export function mcpTestEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    RATE_LIMIT_AUTH_PER_MINUTE: '1000',
    MCP_STDIO_ALLOWLIST: `node,${process.execPath}`,
    ALLOW_PRIVATE_NETWORK: 'true',
    MCP_PING_INTERVAL_MS: '300',
    MCP_CONNECT_TIMEOUT_MS: '10000',
    MCP_RECONNECT_BASE_MS: '200',
    MCP_RECONNECT_MAX_MS: '800',
    MCP_RECONNECT_STABLE_MS: '5000',
    MCP_RECONNECT_SCAN_MS: '500',
    ...extra,
  };
}

export const everythingStdio = (extra: Record<string, unknown> = {}) => ({ name: 'everything', transport: 'stdio', command: 'node', args: [EVERYTHING_JS, 'stdio'], ...extra });

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface HttpMcpServer {
  port: number;
  url: string;
  child: ChildProcess;
  kill(): Promise<void>;
}

/** server-everything's Streamable HTTP transport on `port` (it reads PORT), ready when it says it listens. */
export function startEverythingHttp(port?: number): Promise<HttpMcpServer> {
  return startEverything('streamableHttp', '/mcp', 'listening on port', port);
}

/** server-everything's legacy SSE transport (GET /sse, POST /message). */
export function startEverythingSse(port?: number): Promise<HttpMcpServer> {
  return startEverything('sse', '/sse', 'running on port', port);
}

async function startEverything(mode: string, path: string, ready: string, port?: number): Promise<HttpMcpServer> {
  const chosen = port ?? (await freePort());
  const child = spawn(process.execPath, [EVERYTHING_JS, mode], { env: { PATH: process.env.PATH ?? '', PORT: String(chosen) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start on ${chosen}: ${err}`)), 15_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${err}`));
    });
  });
  child.stderr!.resume();
  return {
    port: chosen,
    url: `http://127.0.0.1:${chosen}${path}`,
    child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export const DYNAMIC_SERVER_TS = join(dirname(new URL(import.meta.url).pathname), 'mcp-dynamic-server.ts');
/** The SDK-built server whose tool list changes on demand (`add-tool`), run through tsx. */
export const dynamicToolsStdio = (extra: Record<string, unknown> = {}) => ({ name: 'dynamic', transport: 'stdio', command: 'node', args: ['--import', 'tsx', DYNAMIC_SERVER_TS], ...extra });
