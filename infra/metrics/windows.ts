import type { LatencySummary } from '../../ports/metrics.js';

/**
 * Sliding-window latency of one series, in bounded memory: the last 15 minutes as 180 slots of
 * 5 s, each slot a sparse log-scale histogram (buckets 4 % wide from 10 µs), so a percentile is
 * read with at most 4 % relative error whatever the volume, and memory does not grow with it.
 */
const SLOT_MS = 5_000;
const SLOTS = 180;
export const MAX_WINDOW_MS = SLOT_MS * SLOTS;
const BASE_MS = 0.01;
const GROWTH = 1.04;
const LOG_GROWTH = Math.log(GROWTH);

const bucketOf = (ms: number) => (ms <= BASE_MS ? 0 : Math.ceil(Math.log(ms / BASE_MS) / LOG_GROWTH));
const upperBoundOf = (bucket: number) => BASE_MS * GROWTH ** bucket;

interface Slot {
  start: number;
  count: number;
  errors: number;
  max: number;
  buckets: Map<number, number>;
}

export class WindowedLatency {
  private readonly slots: Array<Slot | undefined> = new Array(SLOTS);

  record(nowMs: number, ms: number, error: boolean): void {
    const start = nowMs - (nowMs % SLOT_MS);
    const index = Math.floor(nowMs / SLOT_MS) % SLOTS;
    let slot = this.slots[index];
    if (!slot || slot.start !== start) {
      slot = { start, count: 0, errors: 0, max: 0, buckets: new Map() };
      this.slots[index] = slot;
    }
    slot.count += 1;
    if (error) slot.errors += 1;
    if (ms > slot.max) slot.max = ms;
    const bucket = bucketOf(ms);
    slot.buckets.set(bucket, (slot.buckets.get(bucket) ?? 0) + 1);
  }

  /** The observations of the last `windowMs` (whole slots, the current one included); `coveredMs` divides the throughput. */
  summary(nowMs: number, windowMs: number, coveredMs: number): LatencySummary {
    const oldest = nowMs - windowMs;
    let count = 0;
    let errors = 0;
    let max = 0;
    const merged = new Map<number, number>();
    for (const slot of this.slots) {
      if (!slot || slot.start + SLOT_MS <= oldest || slot.start > nowMs) continue;
      count += slot.count;
      errors += slot.errors;
      if (slot.max > max) max = slot.max;
      for (const [bucket, n] of slot.buckets) merged.set(bucket, (merged.get(bucket) ?? 0) + n);
    }
    const seconds = Math.max(1, Math.min(windowMs, coveredMs)) / 1000;
    const sorted = [...merged].sort(([a], [b]) => a - b);
    const percentile = (p: number): number | null => {
      if (count === 0) return null;
      const rank = Math.ceil(p * count);
      let seen = 0;
      for (const [bucket, n] of sorted) {
        seen += n;
        if (seen >= rank) return round(Math.min(upperBoundOf(bucket), max));
      }
      return round(max);
    };
    return {
      count,
      throughputPerSecond: round(count / seconds),
      errors,
      errorRate: count === 0 ? 0 : round(errors / count),
      p50Ms: percentile(0.5),
      p90Ms: percentile(0.9),
      p95Ms: percentile(0.95),
      p99Ms: percentile(0.99),
      maxMs: count === 0 ? null : round(max),
    };
  }

  /** True when nothing was observed within the longest window (the series can be forgotten). */
  idle(nowMs: number): boolean {
    return this.slots.every((s) => !s || s.start + SLOT_MS <= nowMs - MAX_WINDOW_MS);
  }
}

const round = (n: number) => Math.round(n * 1000) / 1000;
