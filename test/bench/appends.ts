/**
 * 1. Appends per second on the embedded store (SqliteEventStore on a temp file, WAL, wrapped in
 * UpcastingEventStore as app/container.ts does).
 *  (a) single-event commands through the command handler (load, fold, decide, append), sequential;
 *  (b) batched appends straight to the store, 100 events per append call.
 */
import { incrementProbe } from '../../commands/probes.js';
import { probeStreamId } from '../../domain/probes/index.js';
import type { NewEvent } from '../../ports/event-store.js';
import { commandContext, embeddedEventStore, latency, now, probeCreated, probeIds, probeIncremented, settle, tempDir, type Report } from './support.js';

const BENCH = '1 appends (SQLite)';

export interface AppendsOptions {
  commands: number;
  commandStreams: number;
  batchedEvents: number;
  batchSize: number;
  batchStreams: number;
}

export const defaults: AppendsOptions = { commands: 20_000, commandStreams: 300, batchedEvents: 200_000, batchSize: 100, batchStreams: 1_000 };

export async function benchAppends(report: Report, o: AppendsOptions = defaults): Promise<void> {
  await commandsThroughHandler(report, o);
  await settle();
  await batchedAppends(report, o);
}

async function commandsThroughHandler(report: Report, o: AppendsOptions): Promise<void> {
  const dir = tempDir('commands');
  const { store } = embeddedEventStore(dir.path);
  try {
    const ids = probeIds(o.commandStreams);
    for (const id of ids) await store.append(probeStreamId(id), [probeCreated(id)], 'no_stream');
    // Warm-up (JIT, statement cache), not counted.
    for (let i = 0; i < 1_000; i++) await incrementProbe(store, commandContext(), ids[i % ids.length], 1);

    const samples = new Float64Array(o.commands);
    const started = now();
    for (let i = 0; i < o.commands; i++) {
      const t0 = now();
      await incrementProbe(store, commandContext(), ids[i % ids.length], 1);
      samples[i] = now() - t0;
    }
    const seconds = (now() - started) / 1000;
    const lat = latency(samples);
    const finalLength = Math.ceil((1_000 + o.commands) / ids.length) + 1;
    report.figure(BENCH, `single-event commands via handleCommand (incrementProbe, ${fmtK(o.commands)} sequential, ${o.commandStreams} streams)`, o.commands / seconds, 'commands/s', {
      note: `p50 ${lat.p50.toFixed(3)} ms, p99 ${lat.p99.toFixed(3)} ms; every command re-reads its stream (≤ ${finalLength} events)`,
    });
    report.figure(BENCH, 'single-event command latency p50', lat.p50, 'ms', { digits: 3 });
    report.figure(BENCH, 'single-event command latency p99', lat.p99, 'ms', { digits: 3 });
  } finally {
    await store.close();
    dir.cleanup();
  }
}

async function batchedAppends(report: Report, o: AppendsOptions): Promise<void> {
  const dir = tempDir('batched');
  const { store } = embeddedEventStore(dir.path);
  try {
    const ids = probeIds(o.batchStreams);
    const revisions = new Map<string, number>();
    // Realistic events: a probe's first batch starts with ProbeCreated. Ids and metadata are made
    // inside the timed loop (a writer has to make them too); one metadata object per batch.
    const batch = (id: string): { events: NewEvent[]; expected: 'no_stream' | number } => {
      const last = revisions.get(id);
      const first = probeCreated(id);
      const events: NewEvent[] = last === undefined ? [first] : [];
      while (events.length < o.batchSize) events.push(probeIncremented(1, first.metadata));
      return { events, expected: last === undefined ? 'no_stream' : last };
    };
    const appendOne = async (i: number) => {
      const id = ids[i % ids.length];
      const { events, expected } = batch(id);
      const result = await store.append(probeStreamId(id), events, expected);
      revisions.set(id, result.revision);
    };
    for (let i = 0; i < 200; i++) await appendOne(i); // warm-up

    const calls = Math.ceil(o.batchedEvents / o.batchSize);
    const samples = new Float64Array(calls);
    const started = now();
    for (let i = 0; i < calls; i++) {
      const t0 = now();
      await appendOne(200 + i);
      samples[i] = now() - t0;
    }
    const seconds = (now() - started) / 1000;
    const lat = latency(samples);
    report.figure(BENCH, `batched appends (${o.batchSize} events per append call, ${fmtK(calls * o.batchSize)} events)`, (calls * o.batchSize) / seconds, 'events/s', {
      target: { op: '>=', value: 20_000 },
      note: `${fmt0(calls / seconds)} append calls/s; per call p50 ${lat.p50.toFixed(2)} ms, p99 ${lat.p99.toFixed(2)} ms`,
    });
  } finally {
    await store.close();
    dir.cleanup();
  }
}

const fmtK = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n));
const fmt0 = (n: number) => Math.round(n).toLocaleString('en-US');
