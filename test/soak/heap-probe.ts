/**
 * Loaded into the soaked service process only (`node --expose-gc --import ./test/soak/heap-probe.ts`):
 * on SIGUSR2 it runs a full garbage collection and prints the live heap on one stdout line.
 * Heap "used" read from /metrics between collections counts garbage too, so on a fast machine it
 * measured how long ago V8 last collected, not what the service keeps.
 */
import { writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';

const gc = (globalThis as { gc?: () => void }).gc;
// HEAP_PROBE_SNAPSHOT_DIR: also write a heap snapshot per probe, to diff what grew (test/soak/README).
const snapshotDir = process.env.HEAP_PROBE_SNAPSHOT_DIR;
let probes = 0;
if (gc) {
  process.on('SIGUSR2', () => {
    gc();
    if (snapshotDir) writeHeapSnapshot(join(snapshotDir, `probe-${++probes}.heapsnapshot`));
    const m = process.memoryUsage();
    process.stdout.write(`${JSON.stringify({ heapProbe: { heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, rss: m.rss, at: Date.now() } })}\n`);
  });
}
export {};
