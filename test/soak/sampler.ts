/**
 * Reads the service's own process metrics (GET /api/metrics, Prometheus text from prom-client's
 * default collectors) during the soak: heap used, resident set and active handles.
 */
import type { CheckResult } from './verify.js';

export interface Sample {
  label: string;
  heapUsed: number;
  rss: number;
  handles: number;
}

/** Growth allowed between the warm sample and the end: caches and indexes fill, leaks keep going. */
export const BOUNDS = { heapFactor: 2, heapSlackBytes: 96 * 2 ** 20, handlesSlack: 64 };

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  if (!line) throw new Error(`metric ${name} missing from GET /metrics`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

export class Sampler {
  readonly samples: Sample[] = [];
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async sample(label: string): Promise<Sample> {
    const res = await fetch(`${this.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${this.token}` } });
    if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
    const text = await res.text();
    const s = { label, heapUsed: metric(text, 'nodejs_heap_size_used_bytes'), rss: metric(text, 'process_resident_memory_bytes'), handles: metric(text, 'nodejs_active_handles_total') };
    this.samples.push(s);
    return s;
  }

  growthCheck(from: string, to: string): CheckResult {
    const a = this.samples.find((s) => s.label === from) ?? this.samples[0];
    const b = this.samples.find((s) => s.label === to)!;
    const problems: string[] = [];
    const heapBound = a.heapUsed * BOUNDS.heapFactor + BOUNDS.heapSlackBytes;
    if (b.heapUsed > heapBound) problems.push(`heap used grew from ${(a.heapUsed / 2 ** 20).toFixed(1)} to ${(b.heapUsed / 2 ** 20).toFixed(1)} MiB (bound ${(heapBound / 2 ** 20).toFixed(1)} MiB)`);
    if (b.handles > a.handles + BOUNDS.handlesSlack) problems.push(`active handles grew from ${a.handles} to ${b.handles} (bound ${a.handles + BOUNDS.handlesSlack})`);
    return { name: `heap ≤ ${BOUNDS.heapFactor}× + ${BOUNDS.heapSlackBytes / 2 ** 20} MiB and handles ≤ +${BOUNDS.handlesSlack} of the warm sample`, checked: 2, problems };
  }
}
