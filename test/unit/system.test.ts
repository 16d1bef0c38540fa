import { expect } from 'chai';
import { createMetricsRegistry } from '../../infra/metrics/registry.js';
import { MAX_WINDOW_MS, WindowedLatency } from '../../infra/metrics/windows.js';
import { percentile } from '../../projections/hybrid.js';
import { systemTimersProjector, workerStatusOf } from '../../projections/system.js';
import { TestClock } from '../support/clock.js';
import { projectionSpec } from '../support/projection-spec.js';
import type { DomainEvent } from '../../domain/shared/events.js';

const t0 = Date.parse('2026-01-01T00:00:00.000Z');

describe('system: sliding-window latency (infra/metrics/windows.ts)', () => {
  it('reads percentiles within 4 % of the exact ones, counts errors, and divides throughput by the time covered', () => {
    const w = new WindowedLatency();
    for (let ms = 1; ms <= 1000; ms += 1) w.record(t0 + ms, ms, ms % 10 === 0);
    const s = w.summary(t0 + 2_000, 60_000, 60_000);
    expect(s.count).to.equal(1000);
    expect(s.errors).to.equal(100);
    expect(s.errorRate).to.equal(0.1);
    expect(s.p50Ms).to.be.within(500, 520);
    expect(s.p95Ms).to.be.within(950, 988);
    expect(s.p99Ms).to.be.within(990, 1000);
    expect(s.maxMs).to.equal(1000);
    expect(s.throughputPerSecond).to.be.closeTo(1000 / 60, 0.01);
    // A process 10 s old: its throughput is over those 10 s, not over the whole minute.
    expect(w.summary(t0 + 2_000, 60_000, 10_000).throughputPerSecond).to.equal(100);
  });

  it('slides: what is older than a window leaves it, and a series idle for 15 minutes can be forgotten', () => {
    const w = new WindowedLatency();
    w.record(t0, 5, false);
    w.record(t0 + 4 * 60_000, 7, false);
    const now = t0 + 4 * 60_000 + 1;
    expect(w.summary(now, 60_000, now - t0)).to.include({ count: 1, p50Ms: 7 });
    expect(w.summary(now, 300_000, now - t0).count).to.equal(2);
    const empty = w.summary(t0 + 30 * 60_000, 900_000, 1e9);
    expect(empty).to.deep.equal({ count: 0, throughputPerSecond: 0, errors: 0, errorRate: 0, p50Ms: null, p90Ms: null, p95Ms: null, p99Ms: null, maxMs: null });
    expect(w.idle(now)).to.equal(false);
    expect(w.idle(t0 + 4 * 60_000 + MAX_WINDOW_MS + 5_000)).to.equal(true);
  });

  it('keeps one sub-millisecond and one slow observation apart', () => {
    const w = new WindowedLatency();
    w.record(t0, 0.2, false);
    w.record(t0, 30_000, false);
    const s = w.summary(t0, 60_000, 60_000);
    expect(s.p50Ms).to.be.within(0.2, 0.21);
    expect(s.p99Ms).to.equal(30_000);
  });
});

describe('system: the metrics registry', () => {
  it('records HTTP, node and provider observations in both views', async () => {
    const clock = new TestClock();
    const registry = createMetricsRegistry({ clock, role: 'all', processId: 'p1', processMetrics: false, sources: { deadLetters: () => ({ 'run-worker': 2 }) } });
    registry.observeHttp('/flows/{flowId}', 'GET', 200, 0.012);
    registry.observeHttp('/flows/{flowId}', 'GET', 503, 0.5);
    registry.observeNode('llm', 1.5, 'failed');
    registry.observeProviderCall('openai', 1.2, 'aborted');
    const perf = registry.performance();
    expect(perf.process).to.include({ id: 'p1', role: 'all', pid: process.pid });
    expect(perf.http[0]!.name).to.equal('GET /flows/{flowId}');
    expect(perf.http[0]!.windows['1m']).to.include({ count: 2, errors: 1, errorRate: 0.5 });
    expect(perf.nodes[0]!.windows['5m']).to.include({ count: 1, errors: 1 });
    expect(perf.providers[0]!.windows['15m']).to.include({ count: 1, errors: 0 }, 'an aborted call is not an error');
    const { text } = await registry.prometheus();
    expect(text).to.include('flowsvc_http_requests_total{method="GET",route="/flows/{flowId}",status_code="503"} 1');
    expect(text).to.include('flowsvc_node_executions_total{kind="llm",outcome="failed"} 1');
    expect(text).to.include('flowsvc_llm_provider_calls_total{provider="openai",outcome="aborted"} 1');
    expect(text).to.include('flowsvc_dead_letters_total{consumer="run-worker"} 2');
    expect(text).to.include('flowsvc_node_duration_seconds_bucket{le="2.5",kind="llm",outcome="failed"} 1');
  });
});

describe('system: worker status from presence (projections/system.ts)', () => {
  const now = new Date(t0 + 100_000);
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  it('RUNNING within 3 intervals, LOST after, SHUTTING_DOWN for the shutdown timeout after a stop, then STOPPED', () => {
    expect(workerStatusOf({ lastHeartbeatAt: at(90_000), stoppedAt: null, heartbeatMs: 5_000 }, now, 5_000, 10_000)).to.equal('RUNNING');
    expect(workerStatusOf({ lastHeartbeatAt: at(85_000), stoppedAt: null, heartbeatMs: 5_000 }, now, 5_000, 10_000)).to.equal('RUNNING');
    expect(workerStatusOf({ lastHeartbeatAt: at(84_999), stoppedAt: null, heartbeatMs: 5_000 }, now, 5_000, 10_000)).to.equal('LOST');
    expect(workerStatusOf({ lastHeartbeatAt: at(95_000), stoppedAt: at(95_000), heartbeatMs: 5_000 }, now, 5_000, 10_000)).to.equal('SHUTTING_DOWN');
    expect(workerStatusOf({ lastHeartbeatAt: at(80_000), stoppedAt: at(89_999), heartbeatMs: 5_000 }, now, 5_000, 10_000)).to.equal('STOPPED');
  });
});

describe('system: hybrid percentiles', () => {
  it('nearest rank', () => {
    expect(percentile([], 0.5)).to.equal(null);
    expect(percentile([7], 0.95)).to.equal(7);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 0.5)).to.equal(50);
    expect(percentile(hundred, 0.95)).to.equal(95);
  });
});

describe('system: the timers read model (system_timers)', () => {
  const at = '2026-01-01T00:00:00.000Z';
  const scheduled = (timerId: string, fireAt: string): DomainEvent => ({ type: 'TimerScheduled', data: { timerId, name: timerId, kind: 'user', fireAt, signal: null, nodeId: null, at } });
  it('one document per timer: pending, fired, canceled, and the pending ones of a closed workflow canceled with it', async () => {
    await projectionSpec([systemTimersProjector])
      .given([
        { streamId: 'workflow-w1', event: scheduled('t1', '2026-01-01T00:01:00.000Z') },
        { streamId: 'workflow-w1', event: scheduled('t2', '2026-01-01T00:02:00.000Z') },
        { streamId: 'workflow-w1', event: scheduled('t3', '2026-01-01T00:03:00.000Z') },
        { streamId: 'workflow-w2', event: scheduled('t4', '2026-01-01T00:04:00.000Z') },
        { streamId: 'workflow-w1', event: { type: 'TimerFired', data: { timerId: 't1', lateMs: 3, at: '2026-01-01T00:01:00.003Z' } } },
        { streamId: 'workflow-w1', event: { type: 'TimerCanceled', data: { timerId: 't2', reason: 'no longer needed', at: '2026-01-01T00:01:30.000Z' } } },
        { streamId: 'workflow-w1', event: { type: 'WorkflowTerminated', data: { by: null, reason: 'done', at: '2026-01-01T00:01:40.000Z' } } },
      ])
      .thenDocuments('system_timers', [
        { _id: 't1', workflowId: 'w1', status: 'fired', firedAt: '2026-01-01T00:01:00.003Z', createdAt: at },
        { _id: 't2', workflowId: 'w1', status: 'canceled', canceledAt: '2026-01-01T00:01:30.000Z' },
        { _id: 't3', workflowId: 'w1', status: 'canceled', canceledAt: '2026-01-01T00:01:40.000Z' },
        { _id: 't4', workflowId: 'w2', status: 'pending', fireAt: '2026-01-01T00:04:00.000Z', firedAt: null },
      ]);
  });
});
