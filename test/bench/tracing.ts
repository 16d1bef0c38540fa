/**
 * The cost of tracing on the hot path (issue 34, item 5): sync runs of a 2-node flow through its
 * public trigger at 4 clients, first with tracing off (the default: no OTEL_ variable), then in the
 * same process with the trace SDK on at 100 % sampling (always_on), exporting every span over
 * OTLP/HTTP protobuf: to the test collector when OTEL_TEST_ENDPOINT is set (bash .ci/servers.sh
 * start), else to a sink in this process that answers 200 (which then shares the CPU). Each run
 * makes six spans (request, run, two nodes, two LLM calls). Aim: ≤ 10 % throughput lost. The
 * modes alternate (off, on, off, on) and the share compares the sums.
 * Runs last in `npm run bench`: the SDK, once registered, stays registered in the process (it is
 * turned off again, so later code pays one boolean test per call site).
 */
import { createServer, type Server } from 'node:http';
import { createLogger } from '../../infra/logger/pino.js';
import { startTracing } from '../../infra/telemetry/tracing.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { runLoad, type LoadResult } from './load.js';
import { triggerLoad } from './runs.js';
import { fmt, latency, settle, type Report } from './support.js';

const BENCH = 'tracing';

export interface TracingBenchOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

export const defaults: TracingBenchOptions = { concurrency: 4, warmupMs: 1_000, durationMs: 5_000 };

/** An OTLP/HTTP endpoint that takes everything and keeps nothing (when no collector runs). */
async function startSink(): Promise<{ url: string; server: Server; received: () => number }> {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, received: () => bytes };
}

export async function benchTracing(report: Report, o: TracingBenchOptions = defaults): Promise<void> {
  const collector = process.env.OTEL_TEST_ENDPOINT;
  const sink = collector ? null : await startSink();
  const endpoint = collector ?? sink!.url;
  report.info(BENCH, `2-node flow via its public trigger (sync), c=${o.concurrency}, ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s measured per mode; spans to ${collector ? `the test collector (${collector})` : 'an in-process sink (no OTEL_TEST_ENDPOINT)'}`);
  // Alternated, so neither mode alone gets the warm JIT or the quiet moment of the machine.
  const rates: Record<'off' | 'on', number[]> = { off: [], on: [] };
  try {
    for (const mode of ['off', 'on', 'off', 'on'] as const) {
      let service: TestService | null = null;
      let tracing: { shutdown(): Promise<void> } | null = null;
      try {
        if (mode === 'on') {
          // The exporter reads its endpoint from the environment, as in a real process.
          process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
          tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'always_on' } as Parameters<typeof startTracing>[0], 'bench', createLogger('silent'));
        }
        service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
        const result = await runLoad(await triggerLoad(service, o));
        rates[mode].push(record(report, `tracing ${mode} (round ${rates[mode].length + 1})`, result));
      } finally {
        await service?.stop();
        await tracing?.shutdown();
        delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      }
      await settle();
    }
  } finally {
    if (sink) {
      report.info(BENCH, `the sink received ${fmt(sink.received())} bytes of spans`);
      await new Promise<void>((resolve) => sink.server.close(() => resolve()));
    }
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  report.figure(BENCH, 'throughput with tracing on (100 % sampled) as a share of off', (sum(rates.on) / sum(rates.off)) * 100, '%', { digits: 1, target: { op: '>=', value: 90 } });
}

function record(report: Report, what: string, r: LoadResult): number {
  if (r.failures) throw new Error(`${what}: ${r.failures} requests failed (${JSON.stringify(r.statuses)}), first: ${r.firstFailure}`);
  const lat = latency(r.latencies);
  const rate = r.requests / (r.elapsedMs / 1000);
  report.figure(BENCH, `${what}: runs/s`, rate, 'runs/s', { note: `${fmt(r.requests)} runs in ${(r.elapsedMs / 1000).toFixed(1)} s` });
  report.figure(BENCH, `${what}: latency p50`, lat.p50, 'ms', { digits: 2 });
  report.figure(BENCH, `${what}: latency p99`, lat.p99, 'ms', { digits: 2 });
  return rate;
}
