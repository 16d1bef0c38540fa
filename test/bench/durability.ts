/**
 * Durability (issue 29, item 4): the embedded store acknowledging after fsync (`DURABILITY=fsync`,
 * SQLite synchronous=FULL, concurrent appends sharing one fsync by group commit) next to
 * acknowledging once the OS has the write (`DURABILITY=process`, synchronous=NORMAL), same run,
 * same load: `POST /api/probes/{id}/increment` over HTTP (the whole app), at 1 client (every
 * request pays its own fsync) and at 32 (they share them); then sync runs of a 2-node flow through
 * its public trigger at 4 clients (several commits per run). The aim: fsync keeps ≥ 70 % of the
 * throughput, which is what made it the default. The data directory is the OS's temporary folder:
 * the figures are only as true as that folder's disk is to the one DATA_DIR will be on.
 */
import { tmpdir } from 'node:os';
import { startTestService, type TestService } from '../support/test-service.js';
import { createProbes } from './http.js';
import { triggerLoad } from './runs.js';
import { runLoad, type LoadResult } from './load.js';
import { fmt, latency, settle, type Report } from './support.js';

const BENCH = 'durability';

export interface DurabilityOptions {
  probes: number;
  concurrencies: number[];
  /** Clients of the public-trigger runs (the c=4). */
  runConcurrency: number;
  warmupMs: number;
  durationMs: number;
}

export const defaults: DurabilityOptions = { probes: 64, concurrencies: [1, 32], runConcurrency: 4, warmupMs: 1_000, durationMs: 4_000 };

export async function benchDurability(report: Report, o: DurabilityOptions = defaults): Promise<void> {
  report.info(BENCH, `POST /api/probes/{id}/increment over HTTP, ${o.probes} probes round-robin, ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s measured per mode and concurrency; DATA_DIR under ${tmpdir()}`);
  for (const concurrency of o.concurrencies) {
    const rates: Record<string, number> = {};
    for (const mode of ['process', 'fsync'] as const) {
      let service: TestService | null = null;
      try {
        service = await startTestService('embedded', { LOG_LEVEL: 'silent', DURABILITY: mode });
        const base = new URL(service.baseUrl);
        const paths = (await createProbes(service.baseUrl, o.probes)).map((id) => `${base.pathname}/probes/${id}/increment`);
        const result = await runLoad({ host: '127.0.0.1', port: Number(base.port), method: 'POST', paths, body: JSON.stringify({ by: 1 }), concurrency, warmupMs: o.warmupMs, durationMs: o.durationMs });
        rates[mode] = record(report, `DURABILITY=${mode}, c=${concurrency}`, result);
      } finally {
        await service?.stop();
      }
      await settle();
    }
    report.figure(BENCH, `fsync throughput as a share of process, c=${concurrency}`, (rates.fsync / rates.process) * 100, '%', { digits: 1, target: { op: '>=', value: 70 } });
  }
  // A run writes more often than a command: its start, each node's result, its end, and the projections' checkpoints.
  const runs: Record<string, number> = {};
  for (const mode of ['process', 'fsync'] as const) {
    let service: TestService | null = null;
    try {
      service = await startTestService('embedded', { LOG_LEVEL: 'silent', DURABILITY: mode, RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      const result = await runLoad(await triggerLoad(service, { concurrency: o.runConcurrency, warmupMs: o.warmupMs, durationMs: o.durationMs }));
      runs[mode] = record(report, `DURABILITY=${mode}, 2-node flow via its public trigger (sync), c=${o.runConcurrency}`, result);
    } finally {
      await service?.stop();
    }
    await settle();
  }
  report.figure(BENCH, `fsync runs/s as a share of process, c=${o.runConcurrency}`, (runs.fsync / runs.process) * 100, '%', { digits: 1, target: { op: '>=', value: 70 } });
}

function record(report: Report, what: string, r: LoadResult): number {
  const lat = latency(r.latencies);
  const rate = r.requests / (r.elapsedMs / 1000);
  const failures = r.failures ? `; ${r.failures} failed (${JSON.stringify(r.statuses)}), first: ${r.firstFailure}` : '';
  if (r.failures) throw new Error(`${what}: ${r.failures} requests failed${failures}`);
  report.figure(BENCH, `${what}: throughput`, rate, 'req/s', { note: `${fmt(r.requests)} requests in ${(r.elapsedMs / 1000).toFixed(1)} s` });
  report.figure(BENCH, `${what}: latency p50`, lat.p50, 'ms', { digits: 2 });
  report.figure(BENCH, `${what}: latency p99`, lat.p99, 'ms', { digits: 2 });
  return rate;
}
