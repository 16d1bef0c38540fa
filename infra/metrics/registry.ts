import { hostname } from 'node:os';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Clock } from '../../ports/clock.js';
import {
  PERFORMANCE_WINDOWS,
  type CallOutcome,
  type MetricsRegistry,
  type NodeOutcome,
  type PerformanceSeries,
  type PerformanceWindow,
} from '../../ports/metrics.js';
import { WindowedLatency } from './windows.js';

/**
 * The metrics registry of one process. Two views of the same observations:
 * - Prometheus (prom-client): cumulative `_total` counters and `_seconds` histograms, scraped at
 *   GET /api/metrics, plus the Node.js process metrics prom-client collects (`process_*`, `nodejs_*`)
 *   and gauges read at scrape time (projection lag, log head, dead letters of this process).
 * - Sliding windows (windows.ts) for GET /api/metrics/performance: percentiles, throughput and
 *   error rates over the last 1, 5 and 15 minutes, by the service clock (a test moves it).
 */

const WINDOW_MS: Record<PerformanceWindow, number> = { '1m': 60_000, '5m': 300_000, '15m': 900_000 };
/** Series per family kept at most (route templates, node kinds and providers are bounded anyway). */
const MAX_SERIES = 500;
const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Figures a scrape reads from the rest of the process. */
export interface MetricsSources {
  /** Dead letters this process's bus recorded since start, per consumer (infra/bus/dead-letters.ts). */
  deadLetters?: () => Record<string, number>;
  /** Each projection's lag behind the log head, in events. */
  projections?: () => Promise<Array<{ name: string; lag: number }>>;
  /** The log's head position. */
  eventLogHead?: () => Promise<number>;
}

export interface MetricsOptions {
  clock: Clock;
  role: string;
  /** This process's worker identity (the one in worker presence). */
  processId: string;
  sources?: MetricsSources;
  /** Collect prom-client's Node.js process metrics (default true). */
  processMetrics?: boolean;
}

class Family {
  private readonly series = new Map<string, WindowedLatency>();
  record(name: string, nowMs: number, ms: number, error: boolean) {
    let s = this.series.get(name);
    if (!s) {
      if (this.series.size >= MAX_SERIES) this.forgetIdle(nowMs);
      if (this.series.size >= MAX_SERIES) return;
      s = new WindowedLatency();
      this.series.set(name, s);
    }
    s.record(nowMs, ms, error);
  }
  snapshot(nowMs: number, coveredMs: number): PerformanceSeries[] {
    this.forgetIdle(nowMs);
    return [...this.series]
      .map(([name, s]) => ({
        name,
        windows: Object.fromEntries(PERFORMANCE_WINDOWS.map((w) => [w, s.summary(nowMs, WINDOW_MS[w], coveredMs)])) as PerformanceSeries['windows'],
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }
  private forgetIdle(nowMs: number) {
    for (const [name, s] of this.series) if (s.idle(nowMs)) this.series.delete(name);
  }
}

/**
 * The Node.js process metrics, collected once per process however many registries it builds (tests
 * build one per service; each collection installs event-loop and GC observers that are never removed).
 */
let processRegistry: Registry | undefined;
function processMetricsRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetricsRegistry(options: MetricsOptions): MetricsRegistry {
  const { clock, sources = {} } = options;
  const startedAt = clock.now();
  const own = new Registry();
  const registers = [own];

  const httpTotal = new Counter({ name: 'flowsvc_http_requests_total', help: 'HTTP requests answered, by method, route template and status code', labelNames: ['method', 'route', 'status_code'], registers });
  const httpSeconds = new Histogram({ name: 'flowsvc_http_request_duration_seconds', help: 'Time from a request arriving to its answer, by method, route template and status code', labelNames: ['method', 'route', 'status_code'], buckets: SECONDS_BUCKETS, registers });
  const nodeTotal = new Counter({ name: 'flowsvc_node_executions_total', help: 'Node executions, by node kind and outcome', labelNames: ['kind', 'outcome'], registers });
  const nodeSeconds = new Histogram({ name: 'flowsvc_node_duration_seconds', help: 'Node execution time, by node kind and outcome', labelNames: ['kind', 'outcome'], buckets: SECONDS_BUCKETS, registers });
  const providerTotal = new Counter({ name: 'flowsvc_llm_provider_calls_total', help: 'LLM provider calls, by provider and outcome', labelNames: ['provider', 'outcome'], registers });
  const providerSeconds = new Histogram({ name: 'flowsvc_llm_provider_call_duration_seconds', help: 'LLM provider call time (retries and waits included), by provider and outcome', labelNames: ['provider', 'outcome'], buckets: SECONDS_BUCKETS, registers });

  new Counter({
    name: 'flowsvc_dead_letters_total',
    help: "Consumer events this process's bus dead-lettered since start, by consumer",
    labelNames: ['consumer'],
    registers,
    collect() {
      if (!sources.deadLetters) return;
      this.reset();
      for (const [consumer, n] of Object.entries(sources.deadLetters())) this.inc({ consumer }, n);
    },
  });
  new Gauge({
    name: 'flowsvc_projection_lag_events',
    help: 'Events of the log a projection has not applied yet, as this process sees it',
    labelNames: ['projection'],
    registers,
    async collect() {
      if (!sources.projections) return;
      this.reset();
      for (const p of await sources.projections()) this.set({ projection: p.name }, p.lag);
    },
  });
  new Gauge({
    name: 'flowsvc_event_log_head_position',
    help: 'Position of the last event in the log',
    registers,
    async collect() {
      if (sources.eventLogHead) this.set(await sources.eventLogHead());
    },
  });

  const register = options.processMetrics === false ? own : Registry.merge([processMetricsRegistry(), own]);

  const http = new Family();
  const nodes = new Family();
  const providers = new Family();
  const nowMs = () => clock.now().getTime();

  return {
    observeHttp(route, method, status, seconds) {
      const labels = { method, route, status_code: String(status) };
      httpTotal.inc(labels);
      httpSeconds.observe(labels, seconds);
      http.record(`${method} ${route}`, nowMs(), seconds * 1000, status >= 500);
    },
    observeNode(kind, seconds, outcome: NodeOutcome) {
      nodeTotal.inc({ kind, outcome });
      nodeSeconds.observe({ kind, outcome }, seconds);
      nodes.record(kind, nowMs(), seconds * 1000, outcome === 'failed');
    },
    observeProviderCall(provider, seconds, outcome: CallOutcome) {
      providerTotal.inc({ provider, outcome });
      providerSeconds.observe({ provider, outcome }, seconds);
      providers.record(provider, nowMs(), seconds * 1000, outcome === 'error');
    },
    performance() {
      const now = nowMs();
      const covered = now - startedAt.getTime();
      return {
        at: new Date(now).toISOString(),
        process: { id: options.processId, role: options.role, host: hostname(), pid: process.pid, startedAt: startedAt.toISOString(), uptimeSeconds: Math.round(covered / 1000) },
        http: http.snapshot(now, covered),
        nodes: nodes.snapshot(now, covered),
        providers: providers.snapshot(now, covered),
      };
    },
    async prometheus() {
      return { contentType: register.contentType, text: await register.metrics() };
    },
  };
}
