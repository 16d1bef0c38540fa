import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer, connect } from 'node:net';

/**
 * Real MCP peers from npm for tests and benchmarks: server-everything in its HTTP modes
 * (Streamable HTTP at /mcp, HTTP+SSE at /sse) as a child process on a free loopback port, and
 * the paths of the stdio servers. Nothing here fakes MCP.
 */
const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  return require.resolve(`${name}/package.json`).replace(/\/package\.json$/, '');
}

export const everythingPath = () => `${packageDir('@modelcontextprotocol/server-everything')}/dist/index.js`;
export const memoryServerPath = () => `${packageDir('@modelcontextprotocol/server-memory')}/dist/index.js`;
export const redisServerPath = () => `${packageDir('@modelcontextprotocol/server-redis')}/dist/index.js`;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface EverythingHttp {
  /** The URL to register: …/mcp for streamableHttp, …/sse for sse. */
  url: string;
  port: number;
  process: ChildProcess;
  /** SIGKILL, waits for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port (after kill). */
  restart(): Promise<void>;
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server-everything exited with ${child.exitCode} before listening`);
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server-everything did not listen on ${port} within ${timeoutMs} ms`);
}

export async function startEverythingHttp(mode: 'streamableHttp' | 'sse', port?: number): Promise<EverythingHttp> {
  const chosen = port ?? (await freePort());
  const spawnIt = () =>
    spawn(process.execPath, [everythingPath(), mode], {
      env: { PATH: process.env.PATH ?? '', PORT: String(chosen) },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
  const handle: EverythingHttp = {
    url: `http://127.0.0.1:${chosen}/${mode === 'sse' ? 'sse' : 'mcp'}`,
    port: chosen,
    process: spawnIt(),
    async kill() {
      const child = handle.process;
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    },
    async restart() {
      await handle.kill();
      handle.process = spawnIt();
      await waitForPort(chosen, handle.process);
    },
  };
  await waitForPort(chosen, handle.process);
  return handle;
}

/** Pids of the live (not zombie) children of this process, from /proc. */
export async function childPids(): Promise<number[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const out: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may contain spaces, so parse after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[1]) === process.pid) out.push(Number(entry));
    } catch {
      // the process went away meanwhile
    }
  }
  return out;
}

/** State letter of a pid ('Z' zombie), or null when it no longer exists. */
export async function processState(pid: number): Promise<string | null> {
  const { readFile } = await import('node:fs/promises');
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return null;
  }
}
