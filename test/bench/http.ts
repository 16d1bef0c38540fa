/**
 * 4. Throughput of one command endpoint over HTTP, next to a bare Koa endpoint, with the same load
 * generator in the same run: `POST /api/probes/{id}/increment {by:1}` on a pool of probes (the
 * whole app from startTestService('embedded'): Koa, validation, command handler, SQLite append,
 * read-your-writes wait for the projection, read-model fetch) versus a `new Koa()` app with
 * the same body parser answering a small JSON (bare-koa.ts).
 */
import type { Server } from 'node:http';
import { BARE_KOA_LABEL, closeServer, startBareKoa } from './bare-koa.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { runLoad, type LoadOptions, type LoadResult } from './load.js';
import { fmt, latency, settle, type Report } from './support.js';

const BENCH = '4 HTTP command endpoint';

export interface HttpOptions {
  probes: number;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

export const defaults: HttpOptions = { probes: 256, concurrency: 32, warmupMs: 1_000, durationMs: 5_000 };

export async function benchHttp(report: Report, o: HttpOptions = defaults): Promise<void> {
  let service: TestService | null = null;
  let bare: Server | null = null;
  try {
    service = await startTestService('embedded', { LOG_LEVEL: 'silent' });
    const ids = await createProbes(service.baseUrl, o.probes);
    bare = await startBareKoa();
    const base = new URL(service.baseUrl);
    const load = (port: number, paths: string[]): LoadOptions => ({
      host: '127.0.0.1',
      port,
      method: 'POST',
      paths,
      body: JSON.stringify({ by: 1 }),
      concurrency: o.concurrency,
      warmupMs: o.warmupMs,
      durationMs: o.durationMs,
    });
    report.info(
      BENCH,
      `command endpoint: full app from startTestService('embedded'), LOG_LEVEL silent, body {by:1}, ${o.probes} probes round-robin`,
    );
    report.info(
      BENCH,
      `load: ${o.concurrency} keep-alive connections, ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s measured each; the load generator is a worker thread of this process and shares the machine's CPU cores with the server(s)`,
    );

    const bareResult = await runLoad(load((bare.address() as { port: number }).port, ['/bare']));
    record(report, BARE_KOA_LABEL, bareResult);
    await settle();
    const paths = ids.map((id) => `${base.pathname}/probes/${id}/increment`);
    const appResult = await runLoad(load(Number(base.port), paths));
    record(report, 'POST /api/probes/{id}/increment (full app)', appResult);

    const ratio = (appResult.requests / appResult.elapsedMs / (bareResult.requests / bareResult.elapsedMs)) * 100;
    report.figure(BENCH, 'command endpoint throughput as a share of bare Koa', ratio, '%', { digits: 1, target: { op: '>=', value: 50 } });
    await checkValues(service, ids, appResult);
  } finally {
    if (bare) await closeServer(bare);
    await service?.stop();
  }
}

function record(report: Report, what: string, r: LoadResult): void {
  const lat = latency(r.latencies);
  const rate = r.requests / (r.elapsedMs / 1000);
  const failures = r.failures ? `; ${r.failures} failed (${JSON.stringify(r.statuses)}), first: ${r.firstFailure}` : '';
  report.figure(BENCH, `${what}: throughput`, rate, 'req/s', { note: `${fmt(r.requests)} requests in ${(r.elapsedMs / 1000).toFixed(1)} s${failures}` });
  report.figure(BENCH, `${what}: latency p50`, lat.p50, 'ms', { digits: 2 });
  report.figure(BENCH, `${what}: latency p99`, lat.p99, 'ms', { digits: 2 });
}

export async function createProbes(baseUrl: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  const suffix = Math.random().toString(36).slice(2, 8);
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${baseUrl}/probes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `bench-${suffix}-${i}` }) });
    const body = (await res.json()) as { probe?: { id: string } };
    if (res.status !== 201 || !body.probe) throw new Error(`POST /probes answered ${res.status}: ${JSON.stringify(body)}`);
    ids.push(body.probe.id);
  }
  return ids;
}

/** Measured numbers only count if the commands really happened: the read model must add up. */
async function checkValues(service: TestService, ids: string[], r: LoadResult): Promise<void> {
  const probes = service.services.readStore.collection<{ _id: string; value: number }>('probes');
  const docs = await probes.find({ _id: { $in: ids } });
  const sum = docs.reduce((s, d) => s + d.value, 0);
  // Warm-up requests also incremented; the measured ones are a lower bound.
  if (sum < r.requests) throw new Error(`read model sums to ${sum}, fewer than the ${r.requests} successful increments measured`);
}
