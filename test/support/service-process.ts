import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs the real entry point (`app/main.ts`) as a child process and waits for its "listening" line. */
export async function startServiceProcess(env: Record<string, string>, args: string[] = [], timeoutMs = 30_000, nodeArgs: string[] = []): Promise<ServiceProcess> {
  return spawnService(['--import', 'tsx', ...nodeArgs, join(root, 'app', 'main.ts'), ...args], env, timeoutMs);
}

/** Compiles `dist/` when a source changed (what `npm start` does first). */
export function buildDistIfStale(): void {
  execFileSync(process.execPath, [join(root, 'scripts', 'build-if-stale.mjs')], { cwd: root, stdio: 'inherit' });
}

/** Runs the compiled entry point (`dist/app/main.js`, what `npm start` runs after `buildDistIfStale()`). */
export async function startBuiltServiceProcess(env: Record<string, string>, timeoutMs = 30_000, nodeArgs: string[] = []): Promise<ServiceProcess> {
  return spawnService([...nodeArgs, join(root, 'dist', 'app', 'main.js')], env, timeoutMs);
}

async function spawnService(argv: string[], env: Record<string, string>, timeoutMs: number): Promise<ServiceProcess> {
  const child = spawn(process.execPath, argv, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in ${timeoutMs} ms:\n${out}\n${err}`)), timeoutMs);
    const onData = () => {
      const match = /"msg":"listening","port":(\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening:\n${out}\n${err}`));
    });
  });
  return { child, baseUrl: `http://127.0.0.1:${port}/api`, stdout: () => out, stderr: () => err, exited };
}

/** Runs the entry point expecting it to refuse to start; returns its exit code and stderr. */
export async function runServiceExpectingExit(env: Record<string, string>, args: string[] = []) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'app', 'main.ts'), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (chunk) => (err += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  return { code, stderr: err };
}

/**
 * The processes of one multi-process test on the distributed adapters: a shared data dir, a fresh
 * MongoDB database and Kafka topic prefix, one JWT secret (so a token from one process is valid in
 * the others), and one teardown.
 */
export class DistributedProcessGroup {
  readonly id = randomBytes(4).toString('hex');
  readonly dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-group-'));
  readonly processes: ServiceProcess[] = [];

  constructor(private readonly label: string) {}

  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      DATA_DIR: this.dataDir, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_AUTH_PER_MINUTE: '1000',
      MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `${this.label}_${this.id}`,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `${this.label}-${this.id}`,
      JWT_SECRET: `${this.label}-secret-${this.id}-0123456789abcdef`,
      // Off unless a test asks (see isolatedEnv): public topics are one per tenant.
      PUBLIC_EVENTS: 'false',
      ...extra,
    };
  }

  /** One process per role, started together with the same environment. */
  async start(env: Record<string, string>, roles: Array<'api' | 'projector' | 'worker' | 'all'>): Promise<ServiceProcess[]> {
    // Several processes compiling and connecting at once on a loaded 2-core machine: give them time.
    const started = await Promise.all(roles.map((role) => startServiceProcess(env, ['--role', role], 90_000)));
    this.processes.push(...started);
    return started;
  }

  /** One more process of `role` in this group (a second API or worker process). */
  async startRole(env: Record<string, string>, role: 'api' | 'projector' | 'worker' | 'all'): Promise<ServiceProcess> {
    const started = await startServiceProcess(env, ['--role', role], 60_000);
    this.processes.push(started);
    return started;
  }

  /** Kills one process the hard way (SIGKILL: no shutdown, no WorkerStopped) and waits for its exit. */
  async kill(p: ServiceProcess): Promise<void> {
    p.child.kill('SIGKILL');
    await p.exited;
  }

  async stop(): Promise<void> {
    for (const p of this.processes) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
