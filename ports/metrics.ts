/**
 * Metrics port: what the code that does the work records (the HTTP middleware, the run executor,
 * the LLM gateway), and what the API reads back (GET /metrics/performance, GET /metrics). The
 * figures are per process: each process keeps its own registry (infra/metrics/registry.ts) and
 * Prometheus scrapes every process; nothing here touches the log or a read model.
 */

/** How a node ended: `completed` (its result recorded) or `failed` (error, timeout). */
export type NodeOutcome = 'completed' | 'failed';
/** How a provider call ended: answered, refused or failed, or aborted by a stop or a deadline. */
export type CallOutcome = 'ok' | 'error' | 'aborted';

export interface Metrics {
  /** One HTTP request: `route` is the route template (`/flows/{flowId}`), never the raw path. */
  observeHttp(route: string, method: string, status: number, seconds: number): void;
  /** One node execution of a run (or a workflow): `kind` is the node kind that ran it. */
  observeNode(kind: string, seconds: number, outcome: NodeOutcome): void;
  /** One LLM provider call (`complete`), retries and waits included. */
  observeProviderCall(provider: string, seconds: number, outcome: CallOutcome): void;
}

/** Does nothing: for code built without a registry (unit tests of the executor, scripts). */
export const noMetrics: Metrics = {
  observeHttp: () => undefined,
  observeNode: () => undefined,
  observeProviderCall: () => undefined,
};

export const PERFORMANCE_WINDOWS = ['1m', '5m', '15m'] as const;
export type PerformanceWindow = (typeof PERFORMANCE_WINDOWS)[number];

/** Latency and volume of one series over one window; durations in milliseconds. */
export interface LatencySummary {
  count: number;
  /** Observations per second over the window (or over the process's life when it is younger). */
  throughputPerSecond: number;
  /** HTTP: answers with status ≥ 500; nodes: failed; provider calls: error (aborted calls are not errors). */
  errors: number;
  errorRate: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

export interface PerformanceSeries {
  /** `GET /flows/{flowId}`, a node kind, or a provider id. */
  name: string;
  windows: Record<PerformanceWindow, LatencySummary>;
}

export interface PerformanceSnapshot {
  at: string;
  process: { id: string; role: string; host: string; pid: number; startedAt: string; uptimeSeconds: number };
  http: PerformanceSeries[];
  nodes: PerformanceSeries[];
  providers: PerformanceSeries[];
}

/** The registry of one process: records (Metrics) and reads back. */
export interface MetricsRegistry extends Metrics {
  performance(): PerformanceSnapshot;
  /** The Prometheus text exposition format (version 0.0.4) of every metric of this process. */
  prometheus(): Promise<{ contentType: string; text: string }>;
}
