/**
 * Samples the soaked service: its live heap after a full garbage collection (heap-probe.ts, asked
 * by SIGUSR2), its resident set and its active handles (GET /api/metrics, prom-client's defaults).
 */
import type { ServiceProcess } from '../support/service-process.js';
import type { CheckResult } from './verify.js';

export interface Sample {
  label: string;
  /** Live heap after a full collection: what the service keeps, not the garbage not yet collected. */
  heapUsed: number;
  rss: number;
  handles: number;
  /** Operations acknowledged when the sample was taken. */
  operations: number;
}

/**
 * Growth allowed between the warm sample and the end. The embedded read store keeps every read
 * model in memory by design (README "Design"), so its heap grows with the data written: each
 * operation may add `perOperationBytes`; a leak grows past that. The distributed configuration keeps
 * its read models in MongoDB and gets no per-operation allowance.
 */
export const BOUNDS = { heapSlackBytes: 48 * 2 ** 20, handlesSlack: 64, perOperationBytes: { embedded: 4096, distributed: 0 } };

/** Node flags that load heap-probe.ts into the service process. */
export const heapProbeNodeArgs = () => ['--expose-gc', '--import', new URL('./heap-probe.ts', import.meta.url).href];

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  if (!line) throw new Error(`metric ${name} missing from GET /metrics`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

function probeLines(stdout: string): Array<{ heapUsed: number; rss: number }> {
  return [...stdout.matchAll(/\{"heapProbe":(\{[^}]*\})\}/g)].map((m) => JSON.parse(m[1]));
}

export class Sampler {
  readonly samples: Sample[] = [];
  constructor(
    private readonly service: ServiceProcess,
    private readonly token: string,
  ) {}

  private async liveHeap(): Promise<number> {
    const before = probeLines(this.service.stdout()).length;
    this.service.child.kill('SIGUSR2');
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const lines = probeLines(this.service.stdout());
      if (lines.length > before) return lines[lines.length - 1].heapUsed;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the heap probe did not answer SIGUSR2 in 30 s (is the service started with heapProbeNodeArgs()?)');
  }

  async sample(label: string, operations: number): Promise<Sample> {
    const heapUsed = await this.liveHeap();
    const res = await fetch(`${this.service.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${this.token}` } });
    if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
    const text = await res.text();
    const s = { label, heapUsed, rss: metric(text, 'process_resident_memory_bytes'), handles: metric(text, 'nodejs_active_handles_total'), operations };
    this.samples.push(s);
    return s;
  }

  growthCheck(from: string, to: string, mode: 'embedded' | 'distributed'): CheckResult {
    const a = this.samples.find((s) => s.label === from) ?? this.samples[0];
    const b = this.samples.find((s) => s.label === to)!;
    const problems: string[] = [];
    const perOp = BOUNDS.perOperationBytes[mode];
    const ops = Math.max(0, b.operations - a.operations);
    const heapBound = a.heapUsed + BOUNDS.heapSlackBytes + ops * perOp;
    const mib = (n: number) => (n / 2 ** 20).toFixed(1);
    if (b.heapUsed > heapBound) problems.push(`live heap grew from ${mib(a.heapUsed)} to ${mib(b.heapUsed)} MiB over ${ops} operations (bound ${mib(heapBound)} MiB)`);
    if (b.handles > a.handles + BOUNDS.handlesSlack) problems.push(`active handles grew from ${a.handles} to ${b.handles} (bound ${a.handles + BOUNDS.handlesSlack})`);
    const allowance = perOp ? ` + ${perOp / 1024} KiB per operation` : '';
    return { name: `live heap ≤ warm + ${BOUNDS.heapSlackBytes / 2 ** 20} MiB${allowance} and handles ≤ warm + ${BOUNDS.handlesSlack}`, checked: 2, problems };
  }
}
