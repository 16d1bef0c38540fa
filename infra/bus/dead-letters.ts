import type { DeadLetter, DeadLetterSink } from '../../ports/dead-letters.js';

/**
 * The dead-letter metric of this process: letters recorded per consumer since start (a counter,
 * as a Prometheus counter would be). Shown in the bus's health detail; the durable, cluster-wide
 * counts are in GET /admin/dead-letters.
 */
export class CountingDeadLetters implements DeadLetterSink {
  private readonly counts = new Map<string, number>();

  constructor(private readonly inner: DeadLetterSink) {}

  async record(letter: DeadLetter): Promise<void> {
    await this.inner.record(letter);
    this.counts.set(letter.consumer, (this.counts.get(letter.consumer) ?? 0) + 1);
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** `; dead letters recorded here: a=1, b=2`, or nothing while there are none. */
  detail(): string {
    const entries = Object.entries(this.snapshot());
    return entries.length ? `; dead letters recorded here: ${entries.map(([c, n]) => `${c}=${n}`).join(', ')}` : '';
  }
}
