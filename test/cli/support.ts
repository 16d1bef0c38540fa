import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Runs `bin/flowctl` as a real child process, as a user would. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const flowctlBin = join(root, 'bin', 'flowctl');

export interface FlowctlEnv {
  url: string;
  /** XDG_CONFIG_HOME of this "user's machine". */
  configHome: string;
  extra?: Record<string, string>;
}

export const newConfigHome = () => mkdtempSync(join(tmpdir(), 'flowctl-home-'));

function envOf(env: FlowctlEnv): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: env.configHome, XDG_CONFIG_HOME: env.configHome, FLOWCTL_URL: env.url, NO_COLOR: '1', ...env.extra };
}

/** A running flowctl: its output so far, a way to wait for a line, and its exit. */
export interface FlowctlProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr', timeoutMs?: number): Promise<RegExpExecArray>;
}

export function spawnFlowctl(args: string[], env: FlowctlEnv, options: { stdin?: 'pipe' | 'ignore' } = {}): FlowctlProcess {
  const child = spawn(process.execPath, [flowctlBin, ...args], { cwd: root, env: envOf(env), stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout: out, stderr: err })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, stream = 'stdout', timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stream === 'stdout' ? out : err);
          if (match) return resolve(match);
          if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
            return reject(new Error(`flowctl ${args.join(' ')}: no ${pattern} on ${stream} (exit ${child.exitCode})\nstdout:\n${out}\nstderr:\n${err}`));
          }
          setTimeout(check, 25);
        };
        check();
      });
    },
  };
}

/** Runs flowctl to its end. */
export async function flowctl(args: string[], env: FlowctlEnv, timeoutMs = 30_000) {
  const p = spawnFlowctl(args, env);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
  const result = await p.exited;
  clearTimeout(timer);
  return result;
}

/**
 * A TCP proxy between flowctl and the service: it can cut every connection (the network drops),
 * refuse new ones for a while (the network is down), point at a restarted service on another
 * port, and shows the bytes going each way to a `sniff` callback.
 */
export class TcpProxy {
  private server: import('node:net').Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();
  private down = false;
  port = 0;
  connections = 0;
  sniff: ((direction: 'up' | 'down', data: string) => void) | null = null;

  constructor(private targetPort: number) {}

  async start(): Promise<this> {
    const net = await import('node:net');
    this.server = net.createServer((client) => {
      if (this.down) return client.destroy();
      this.connections++;
      const upstream = net.connect(this.targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.on('data', (d: Buffer) => {
        this.sniff?.('up', d.toString('latin1'));
        upstream.write(d);
      });
      upstream.on('data', (d: Buffer) => {
        this.sniff?.('down', d.toString('latin1'));
        client.write(d);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  get url() {
    return `http://127.0.0.1:${this.port}/api`;
  }

  /** Cuts every open connection (both sides), without a word. */
  dropAll() {
    for (const s of this.sockets) s.destroy();
  }

  /** While down, every new connection is closed at once and open ones are cut. */
  setDown(down: boolean) {
    this.down = down;
    if (down) this.dropAll();
  }

  retarget(port: number) {
    this.targetPort = port;
  }

  async stop() {
    this.dropAll();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
