/**
 * 2. Replay: the probes projector fed from 100,000 events in SQLite, into each embedded read store
 * (in memory, and on disk in SQLite: the service's default, reported as a ratio of memory's rate):
 *  - start-up: a fresh ProjectionRunner.start() until it has caught up (what an empty read store
 *    pays: every start with READ_MODELS=memory, the first start with SQLite);
 *  - rebuild: ProjectionRunner.rebuild('probes') (drop, then project everything again).
 */
import { probeStreamId } from '../../domain/probes/index.js';
import type { EventStore, NewEvent } from '../../ports/event-store.js';
import type { ReadStore } from '../../ports/read-store.js';
import { ProjectionRunner } from '../../app/projection-runner.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { SqliteReadStore } from '../../infra/read-store/sqlite.js';
import { join } from 'node:path';
import { probesProjector, type ProbeView } from '../../projections/probes.js';
import { embeddedEventStore, errorCollectingLogger, fmt, now, probeCreated, probeIds, probeIncremented, settle, tempDir, type Report } from './support.js';

const BENCH = '2 replay (probes projector)';

export interface ReplayOptions {
  streams: number;
  eventsPerStream: number;
  /** Events per append call while seeding; streams are interleaved round by round. */
  seedBatch: number;
}

export const defaults: ReplayOptions = { streams: 1_000, eventsPerStream: 100, seedBatch: 20 };

export async function benchReplay(report: Report, o: ReplayOptions = defaults): Promise<void> {
  const dir = tempDir('replay');
  const { store } = embeddedEventStore(dir.path);
  let runner: ProjectionRunner | null = null;
  try {
    const total = await seed(store, o);
    const head = await store.headPosition();
    report.info(BENCH, `seeded ${fmt(total)} events (${o.streams} probe streams × ${o.eventsPerStream}: ProbeCreated then ProbeIncremented), appended in batches of ${o.seedBatch}`);
    await settle();

    const rates: Record<string, number> = {};
    for (const [label, open] of [
      ['memory', () => new MemoryReadStore()],
      ['SQLite', () => new SqliteReadStore(join(dir.path, 'read-models.db'))],
    ] as Array<[string, () => ReadStore]>) {
      // Start-up: what a process pays before an empty read store is current.
      const readStore = open();
      const errors: string[] = [];
      runner = new ProjectionRunner(store, readStore, [probesProjector], errorCollectingLogger(errors));
      const t0 = now();
      await runner.start();
      await caughtUp(readStore, head, errors);
      const startupMs = now() - t0;
      await verify(readStore, o);
      rates[label] = total / (startupMs / 1000);
      report.figure(BENCH, `${label}: start-up, fresh ProjectionRunner.start() until caught up on ${fmt(total)} events`, startupMs, 'ms', {
        note: `${fmt(rates[label])} events/s${label === 'memory' ? '' : `, ${((rates[label] / rates.memory) * 100).toFixed(0)} % of memory's rate in the same run`}`,
      });
      await settle();

      // Rebuild through the runner's own API (its durationMs covers drop + catch-up).
      const t1 = now();
      const result = await runner.rebuild('probes');
      const rebuildMs = now() - t1;
      await verify(readStore, o);
      report.figure(BENCH, `${label}: rebuild('probes') from ${fmt(result.events)} events`, result.events / (rebuildMs / 1000), 'events/s', {
        target: label === 'memory' ? { op: '>=', value: 100_000 } : undefined,
        note: `${fmt(rebuildMs)} ms (runner reports ${result.durationMs} ms)`,
      });
      await runner.stop();
      runner = null;
      await readStore.close();
      await settle();
    }
  } finally {
    await runner?.stop();
    await store.close();
    dir.cleanup();
  }
}

async function seed(store: EventStore, o: ReplayOptions): Promise<number> {
  const ids = probeIds(o.streams, 'replay');
  const revision = new Map<string, number>();
  let total = 0;
  for (let done = 0; done < o.eventsPerStream; done += o.seedBatch) {
    for (const id of ids) {
      const n = Math.min(o.seedBatch, o.eventsPerStream - done);
      const first = done === 0 ? probeCreated(id) : probeIncremented(1);
      const events: NewEvent[] = [first];
      while (events.length < n) events.push(probeIncremented(1, first.metadata));
      const last = revision.get(id);
      const result = await store.append(probeStreamId(id), events, last === undefined ? 'no_stream' : last);
      revision.set(id, result.revision);
      total += n;
    }
  }
  return total;
}

/**
 * Polls the projector's stored checkpoint (key `projection:probes`) every 2 ms rather than using
 * runner.waitFor, which would wake on every projected event and so slow down what it measures.
 */
async function caughtUp(readStore: ReadStore, head: number, errors: string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (errors.length) throw new Error(`projection failed: ${errors[0]}`);
    const position = (await readStore.checkpoints.get('projection:probes')) ?? 0;
    if (position >= head) return;
    if (Date.now() > deadline) throw new Error(`projection not caught up after ${timeoutMs} ms (at ${position} of ${head})`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A benchmark of a broken projection would be meaningless: check the result once. */
async function verify(readStore: ReadStore, o: ReplayOptions): Promise<void> {
  const probes = readStore.collection<ProbeView>('probes');
  const count = await probes.count();
  const sample = await probes.findOne({ _id: probeIds(1, 'replay')[0] });
  if (count !== o.streams || sample?.value !== o.eventsPerStream - 1) {
    throw new Error(`projection result is wrong: ${count} probes, first value ${sample?.value}`);
  }
}
