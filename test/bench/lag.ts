/**
 * 3a. Append-to-visible lag, embedded: SQLite event store (wrapped as in the container), probes projector in a running
 * ProjectionRunner over a MemoryReadStore. Sequential commands; for each, the time from just
 * before the command to runner.waitFor(position) resolving (read-your-writes as the API does it).
 */
import { incrementProbe } from '../../commands/probes.js';
import { probeStreamId } from '../../domain/probes/index.js';
import { ProjectionRunner } from '../../infra/projection-runner.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { getProbe, probesProjector } from '../../projections/probes.js';
import { commandContext, embeddedEventStore, errorCollectingLogger, latency, now, probeCreated, probeIds, tempDir, type Report } from './support.js';

const BENCH = '3 append-to-visible lag';

export async function benchEmbeddedLag(report: Report, commands = 2_000, streams = 100): Promise<void> {
  const dir = tempDir('lag');
  const { store } = embeddedEventStore(dir.path);
  const readStore = new MemoryReadStore();
  const errors: string[] = [];
  const runner = new ProjectionRunner(store, readStore, [probesProjector], errorCollectingLogger(errors));
  try {
    const ids = probeIds(streams, 'lag');
    for (const id of ids) await store.append(probeStreamId(id), [probeCreated(id)], 'no_stream');
    await runner.start();
    if (!(await runner.waitFor(await store.headPosition(), 'probe-x', 10_000))) throw new Error('projection did not catch up on the seed');

    const run = async (n: number, total?: Float64Array, afterAppend?: Float64Array) => {
      for (let i = 0; i < n; i++) {
        const id = ids[i % ids.length];
        const t0 = now();
        const result = await incrementProbe(store, commandContext(), id, 1);
        const t1 = now();
        const visible = await runner.waitFor(result.position!, probeStreamId(id), 5_000);
        const t2 = now();
        if (!visible) throw new Error(`event ${result.position} not visible after 5 s${errors.length ? `: ${errors[0]}` : ''}`);
        total && (total[i] = t2 - t0);
        afterAppend && (afterAppend[i] = t2 - t1);
        // Sanity (not timed): the document really shows this command.
        if (total && i % 100 === 0) {
          const doc = await getProbe(readStore, id);
          if (doc?.version !== result.revision) throw new Error(`read model shows version ${doc?.version}, expected ${result.revision}`);
        }
      }
    };
    await run(300); // warm-up
    const total = new Float64Array(commands);
    const afterAppend = new Float64Array(commands);
    await run(commands, total, afterAppend);

    const t = latency(total);
    const a = latency(afterAppend);
    report.figure(BENCH, `embedded: command → visible in read model (${commands} sequential), p50`, t.p50, 'ms', { digits: 3 });
    report.figure(BENCH, 'embedded: command → visible in read model, p99', t.p99, 'ms', {
      digits: 3,
      target: { op: '<=', value: 10 },
      note: `max ${t.max.toFixed(2)} ms`,
    });
    report.figure(BENCH, 'embedded: append resolved → visible (projection part only), p50', a.p50, 'ms', { digits: 3 });
    report.figure(BENCH, 'embedded: append resolved → visible (projection part only), p99', a.p99, 'ms', { digits: 3 });
  } finally {
    await runner.stop();
    await store.close();
    dir.cleanup();
  }
}
