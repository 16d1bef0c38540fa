/**
 * The soak's `--faults` (distributed configuration only, issue 37): while the mix runs, the servers
 * underneath fail at seeded random times: Kafka, PostgreSQL (FerretDB's backend), FerretDB and Redis
 * are stopped, left down a few seconds and started again (`.ci/servers.sh restart`), and a second
 * worker process is killed with SIGKILL and started again, as a supervisor would. The service under
 * test is never restarted: it must recover by itself.
 *
 * An operation that fails while a fault is on, or within the grace after the server is back, is
 * excused (counted per fault); any other failure fails the soak as without faults. Every write
 * acknowledged meanwhile is still checked at the end.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prng } from './mix.js';

export type FaultKind = 'kafka' | 'postgres' | 'ferretdb' | 'redis' | 'worker';
export const FAULT_KINDS: FaultKind[] = ['kafka', 'postgres', 'ferretdb', 'redis', 'worker'];

export interface Fault {
  kind: FaultKind;
  /** Milliseconds after the load started. */
  atMs: number;
  downMs: number;
}

export interface FaultWindow extends Fault {
  startedAt: number;
  /** When the server (or the worker) was ready again; null while down. */
  upAt: number | null;
  error: string | null;
  excused: number;
  /** First operation that succeeded after `upAt`, in ms after it. */
  firstSuccessAfterMs: number | null;
}

/** Restarting the worker process: kill it (SIGKILL), then start another. */
export interface WorkerControl {
  kill(): Promise<void>;
  start(): Promise<void>;
}

/** After a server is back, operations may fail this long (clients reconnecting, consumers rejoining). */
export const RECOVERY_GRACE_MS = 30_000;

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The latest a fault may begin: the grace plus 20 s of calm before the end. */
export const latestFaultStartMs = (durationMs: number) => durationMs - RECOVERY_GRACE_MS - 20_000;

/**
 * Faults from `firstAtMs` on, one every 25–50 s (scaled down for short soaks), each kind once per
 * round in a seeded order so a short soak still meets several; none starts later than the grace
 * plus 20 s before the end, so the service has time to show it recovered.
 */
export function planFaults(seed: number, durationMs: number): Fault[] {
  const rand = prng(seed ^ 0x0fa17);
  const scale = Math.min(1, durationMs / 600_000);
  const firstAtMs = Math.max(15_000, durationMs * 0.1);
  const lastStartMs = latestFaultStartMs(durationMs);
  const faults: Fault[] = [];
  let round: FaultKind[] = [];
  for (let at = firstAtMs; at <= lastStartMs; ) {
    if (!round.length) round = [...FAULT_KINDS].sort(() => rand() - 0.5);
    const downMs = Math.round(2_000 + rand() * 6_000);
    faults.push({ kind: round.shift()!, atMs: Math.round(at), downMs });
    at += downMs + (25_000 + rand() * 25_000) * Math.max(0.4, scale);
  }
  return faults;
}

export class FaultInjector {
  readonly windows: FaultWindow[] = [];

  constructor(private readonly worker: WorkerControl, private readonly log: (line: string) => void) {}

  /**
   * Runs the plan from `startedAt` (epoch ms), one fault at a time, until done or `signal` aborts.
   * A fault that a slow restart pushed past `latestStartMs` is left out: the end must stay calm.
   */
  async run(plan: Fault[], startedAt: number, latestStartMs: number, signal: AbortSignal): Promise<void> {
    for (const fault of plan) {
      if (Date.now() - startedAt > latestStartMs) return;
      const wait = startedAt + fault.atMs - Date.now();
      if (wait > 0) await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      if (signal.aborted) return;
      const window: FaultWindow = { ...fault, startedAt: Date.now(), upAt: null, error: null, excused: 0, firstSuccessAfterMs: null };
      this.windows.push(window);
      this.log(`fault: ${fault.kind} down for ${(fault.downMs / 1000).toFixed(1)} s`);
      try {
        if (fault.kind === 'worker') {
          await this.worker.kill();
          await new Promise((r) => setTimeout(r, fault.downMs));
          await this.worker.start();
        } else {
          await restartServer(fault.kind, fault.downMs);
        }
      } catch (err) {
        window.error = (err as Error).message.slice(0, 500);
      }
      window.upAt = Date.now();
      this.log(`fault: ${fault.kind} up again after ${((window.upAt - window.startedAt) / 1000).toFixed(1)} s${window.error ? ` (error: ${window.error})` : ''}`);
    }
  }

  /** The fault that excuses an operation run from `from` to `to` (epoch ms), counted; null if none. */
  excuse(from: number, to: number): FaultWindow | null {
    const window = this.windows.find((w) => from <= (w.upAt ?? Infinity) + RECOVERY_GRACE_MS && to >= w.startedAt);
    if (window) window.excused++;
    return window ?? null;
  }

  /** Notes a success at `at`: the first one after a fault's end is its recovery time. */
  succeeded(at: number): void {
    for (const w of this.windows) if (w.upAt !== null && w.firstSuccessAfterMs === null && at >= w.upAt) w.firstSuccessAfterMs = at - w.upAt;
  }
}

function restartServer(kind: Exclude<FaultKind, 'worker'>, downMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(root, '.ci', 'servers.sh'), 'restart', kind, (downMs / 1000).toFixed(1)], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`servers.sh restart ${kind} exited ${code}: ${output.slice(-400)}`))));
  });
}
