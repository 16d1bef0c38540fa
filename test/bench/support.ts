/**
 * Shared pieces of the benchmarks: figures and their targets, percentiles, temp dirs, a silent
 * logger and realistic probe events. Benchmarks measure; they never assert.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandContext } from '../../commands/handle.js';
import type { EventMetadata } from '../../domain/shared/events.js';
import { allUpcasters } from '../../domain/upcasters.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { UpcastingEventStore } from '../../infra/event-store/upcasting.js';
import type { EventStore, NewEvent } from '../../ports/event-store.js';
import type { Logger } from '../../ports/logger.js';

// ---------------------------------------------------------------- figures

export interface Target {
  op: '>=' | '<=';
  value: number;
}

export interface Figure {
  bench: string;
  name: string;
  /** null: skipped or failed (see `note`). */
  value: number | null;
  unit: string;
  digits: number;
  target?: Target;
  note?: string;
}

export const met = (f: Figure): boolean | null =>
  f.value === null || !f.target ? null : f.target.op === '>=' ? f.value >= f.target.value : f.value <= f.target.value;

export const fmt = (v: number, digits = 0) => v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const fmtTarget = (t: Target, unit: string, digits: number) => `${t.op === '>=' ? '≥' : '≤'} ${fmt(t.value, t.value % 1 ? digits : 0)} ${unit}`;

/** Collects figures, prints one line per figure as it is measured and the Markdown table at the end. */
export class Report {
  readonly figures: Figure[] = [];

  figure(bench: string, name: string, value: number, unit: string, options: { digits?: number; target?: Target; note?: string } = {}): void {
    const f: Figure = { bench, name, value, unit, digits: options.digits ?? 0, target: options.target, note: options.note };
    this.figures.push(f);
    const ok = met(f);
    const target = f.target ? `   [target ${fmtTarget(f.target, unit, f.digits)}: ${ok ? 'MET' : 'NOT MET'}]` : '';
    console.log(`FIGURE ${bench} | ${name}: ${fmt(value, f.digits)} ${unit}${target}${f.note ? `   (${f.note})` : ''}`);
  }

  skip(bench: string, name: string, reason: string, target?: Target, unit = ''): void {
    this.figures.push({ bench, name, value: null, unit, digits: 0, target, note: `skipped: ${reason}` });
    console.log(`SKIP   ${bench} | ${name}: ${reason}`);
  }

  fail(bench: string, reason: string): void {
    this.figures.push({ bench, name: '(benchmark failed)', value: null, unit: '', digits: 0, note: `failed: ${reason}` });
    console.log(`ERROR  ${bench}: ${reason}`);
  }

  info(bench: string, text: string): void {
    console.log(`       ${bench} | ${text}`);
  }

  markdown(): string {
    const rows = this.figures.map((f) => {
      const value = f.value === null ? `— (${f.note})` : `${fmt(f.value, f.digits)} ${f.unit}`;
      const target = f.target ? fmtTarget(f.target, f.unit, f.digits) : '—';
      const ok = met(f);
      const verdict = ok === null ? (f.target ? 'not measured' : '—') : ok ? 'yes' : '**no**';
      return `| ${f.bench} | ${f.name} | ${value} | ${target} | ${verdict} |`;
    });
    return ['| Benchmark | Figure | Measured | Target | Met |', '|---|---|---|---|---|', ...rows].join('\n');
  }
}

// ---------------------------------------------------------------- statistics

export interface Latency {
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles of `samples` (milliseconds); sorts a copy. */
export function latency(samples: ArrayLike<number>): Latency {
  const sorted = Float64Array.from(samples).sort();
  const n = sorted.length;
  if (n === 0) return { p50: NaN, p99: NaN, max: NaN, mean: NaN };
  const at = (p: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))];
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  return { p50: at(50), p99: at(99), max: sorted[n - 1], mean: sum / n };
}

export const now = () => performance.now();

// ---------------------------------------------------------------- resources

const openDirs = new Set<string>();

/** A fresh directory under the OS temp dir; `cleanup()` (also run at exit) removes it. */
export function tempDir(label: string): { path: string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), `flowsvc-bench-${label}-`));
  openDirs.add(path);
  return {
    path,
    cleanup() {
      openDirs.delete(path);
      rmSync(path, { recursive: true, force: true });
    },
  };
}

export function cleanupAllTempDirs(): void {
  for (const path of openDirs) rmSync(path, { recursive: true, force: true });
  openDirs.clear();
}

/** The embedded event store as app/container.ts builds it: SQLite file, upcasting wrapper. */
export function embeddedEventStore(dir: string): { raw: SqliteEventStore; store: EventStore } {
  const raw = new SqliteEventStore(join(dir, 'events.db'));
  return { raw, store: new UpcastingEventStore(raw, allUpcasters) };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLogger };

/** Silent, but keeps error entries so a benchmark can stop early when a component failed. */
export function errorCollectingLogger(errors: string[]): Logger {
  const logger: Logger = {
    debug() {},
    info() {},
    warn() {},
    error(obj, msg) {
      const err = typeof obj === 'object' && obj && 'err' in obj ? (obj as { err?: Error }).err?.message : undefined;
      errors.push([msg, err].filter(Boolean).join(': ') || String(obj));
    },
    child: () => logger,
  };
  return logger;
}

/** Lets pending I/O callbacks and timers run, and collects garbage when --expose-gc is on. */
export async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  (globalThis as { gc?: () => void }).gc?.();
}

// ---------------------------------------------------------------- realistic probe data

/** What the HTTP layer builds per request: a new correlation and request id, an actor, a tenant. */
export function commandContext(): CommandContext {
  const requestId = randomUUID();
  return {
    actorId: 'user-7d3c2a9e-5b1f-4c8e-9a0d-2f6b1e4c8a71',
    orgId: 'org-1f2e3d4c',
    workspaceId: 'ws-5a6b7c8d',
    correlationId: requestId,
    causationId: null,
    requestId,
    now: new Date(),
  };
}

export const probeIds = (n: number, prefix = 'bench') => Array.from({ length: n }, (_, i) => `${prefix}${i.toString().padStart(5, '0')}`);

/** The metadata handleCommand derives from a CommandContext. */
function metadata(): EventMetadata {
  const { now: at, ...rest } = commandContext();
  return { ...rest, occurredAt: at.toISOString() };
}

export function probeCreated(probeId: string, meta: EventMetadata = metadata()): NewEvent {
  return { id: randomUUID(), type: 'ProbeCreated', data: { probeId, name: `bench probe ${probeId}`, createdAt: meta.occurredAt }, metadata: meta };
}

export function probeIncremented(by = 1, meta: EventMetadata = metadata()): NewEvent {
  return { id: randomUUID(), type: 'ProbeIncremented', data: { by, at: meta.occurredAt }, metadata: meta };
}

/**
 * Profiling aid: with BENCH_CPU_PROFILE=<file.cpuprofile> set, records a V8 CPU profile of this
 * process from `start()` to `stop()` only (the timed window, not start-up), for Chrome DevTools.
 */
export async function profileWindow(): Promise<{ stop(): Promise<void> }> {
  const file = process.env.BENCH_CPU_PROFILE;
  if (!file) return { stop: async () => undefined };
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      console.log(`CPU profile of the timed window written to ${file}`);
    },
  };
}
