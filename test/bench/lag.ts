/**
 * 3b. Projection throughput (benchProjectionThroughput, below; `npm run bench -- lag`).
 * 3a. Append-to-visible lag, embedded: SQLite event store (wrapped as in the container), probes projector in a running
 * ProjectionRunner over a MemoryReadStore. Sequential commands; for each, the time from just
 * before the command to runner.waitFor(position) resolving (read-your-writes as the API does it).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { incrementProbe } from '../../commands/probes.js';
import { decideRun, evolveRun, initialRunState, runStreamId, type RunCommand } from '../../domain/runs/index.js';
import type { EventMetadata } from '../../domain/shared/events.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ReadStore } from '../../ports/read-store.js';
import { MongoReadStore } from '../../infra/read-store/mongo.js';
import type { Projector } from '../../projections/projector.js';
import { runsProjector } from '../../projections/runs.js';
import { probeStreamId } from '../../domain/probes/index.js';
import { ProjectionRunner } from '../../app/projection-runner.js';
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
  await benchProjectionThroughput(report);
}

// ---------------------------------------------------------------- projection throughput (issue 18, item 4)

const THROUGHPUT = '3 projection throughput';

/**
 * A burst of run events as concurrent runs leave them: `runs` linear flows of `nodes` transform
 * nodes, their steps appended round-robin (request, claim, then each node's start and end), every
 * event made by the real decider.
 */
async function appendRunBurst(store: EventStore, runs: number, nodes: number): Promise<void> {
  const flowNodes = Array.from({ length: nodes }, (_, i) => ({ id: `n${i}`, type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: `step ${i} {{previous}}` } }));
  const edges = flowNodes.slice(1).map((n, i) => ({ id: `e${i}`, source: flowNodes[i].id, target: n.id }));
  const streams = Array.from({ length: runs }, (_, r) => ({ id: `bench-${randomUUID()}`, state: initialRunState, revision: -1 as number, r }));
  const meta = () => ({ ...commandContext(), occurredAt: new Date().toISOString() });
  const step = async (s: (typeof streams)[number], command: Record<string, unknown>) => {
    const decided = decideRun({ ...command, at: new Date().toISOString() } as RunCommand, s.state);
    if (!decided.length) return;
    for (const e of decided) s.state = evolveRun(s.state, e);
    const { now: _now, ...context } = meta();
    const result = await store.append(runStreamId(s.id), decided.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata: context as EventMetadata })), s.revision < 0 ? 'no_stream' : s.revision);
    s.revision = result.revision;
  };
  for (const s of streams) {
    await step(s, {
      type: 'RequestRun', processId: s.id, flowId: `flow-bench-${s.r % 8}`, flowVersion: 1, ownerId: 'user-bench', orgId: null, workspaceId: null,
      mode: 'flow', nodes: flowNodes, edges, inputs: { who: 'bench' }, async: true, requestedBy: 'user-bench', source: 'api', idempotencyKey: null,
    });
  }
  for (const s of streams) await step(s, { type: 'ClaimRun', workerId: 'bench-worker' });
  for (let i = 0; i < nodes; i++) {
    for (const s of streams) await step(s, { type: 'StartNode', workerId: 'bench-worker', nodeId: `n${i}` });
    for (const s of streams) await step(s, { type: 'CompleteNode', workerId: 'bench-worker', nodeId: `n${i}`, output: `output of step ${i} `.repeat(8), executionTime: 1 });
  }
}

/** The projection loop as it was before batching: project, then checkpoint, per event. */
async function projectPerEvent(events: EventStore, store: ReadStore, projector: Projector, head: number): Promise<void> {
  await projector.setup(store);
  const subscription = events.subscribe({ after: 0, categories: projector.categories });
  try {
    for await (const event of subscription) {
      await projector.project(event, store);
      await store.checkpoints.set(`projection:${projector.name}`, event.position);
      if (event.position >= head) return;
    }
  } finally {
    await subscription.close();
  }
}

/**
 * Run events projected per second from a burst already in the log: the runs projector batched by
 * the ProjectionRunner (bulk write, one checkpoint per batch), against the per-event loop it
 * replaced, same events, same run; on the MongoDB-wire server when MONGODB_URL is set, and in memory.
 */
export async function benchProjectionThroughput(report: Report, runs = 64, nodes = 4): Promise<void> {
  const dir = tempDir('projection-throughput');
  const { store } = embeddedEventStore(dir.path);
  const stores: Array<{ label: string; open: (tag: string) => Promise<ReadStore & { drop?: () => Promise<void> }> }> = [
    { label: 'in memory', open: async () => new MemoryReadStore() },
  ];
  if (process.env.MONGODB_URL) {
    const db = `bench_projection_${randomBytes(4).toString('hex')}`;
    stores.unshift({ label: 'MongoDB wire', open: (tag) => MongoReadStore.connect(process.env.MONGODB_URL!, db, { prefix: `${tag}_` }) });
  } else {
    report.skip(THROUGHPUT, 'MongoDB wire: run events projected (batched)', 'MONGODB_URL is not set', undefined, 'events/s');
  }
  try {
    await appendRunBurst(store, runs, nodes);
    const head = await store.headPosition();
    const total = (await store.readAll({ categories: ['run'], maxCount: 1_000_000 })).length;
    report.info(THROUGHPUT, `${runs} runs × ${nodes} nodes: ${total} run events in the log`);
    for (const { label, open } of stores) {
      const perEventStore = await open('per_event');
      const t0 = now();
      await projectPerEvent(store, perEventStore, runsProjector, head);
      const perEvent = total / ((now() - t0) / 1000);
      const batchedStore = await open('batched');
      const errors: string[] = [];
      const runner = new ProjectionRunner(store, batchedStore, [runsProjector], errorCollectingLogger(errors));
      const t1 = now();
      await runner.start();
      const caughtUp = await runner.waitFor(head, 'run-x', 120_000);
      const batched = total / ((now() - t1) / 1000);
      await runner.stop();
      if (!caughtUp) throw new Error(`batched projection did not catch up${errors.length ? `: ${errors[0]}` : ''}`);
      // Sanity (not timed): both read models agree.
      const [a, b] = await Promise.all([perEventStore, batchedStore].map((s) => s.collection('processes').find({}, { sort: { _id: 1 }, limit: 50 })));
      if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error('the batched read model differs from the per-event one');
      report.figure(THROUGHPUT, `${label}: run events projected, per event (before: checkpoint per event)`, perEvent, 'events/s');
      report.figure(THROUGHPUT, `${label}: run events projected, batched (bulk write, checkpoint per batch)`, batched, 'events/s', {
        note: `${(batched / perEvent).toFixed(1)}× per event, same run`,
      });
      for (const s of [perEventStore, batchedStore]) {
        for (const c of runsProjector.collections) await s.collection(c).drop();
        await s.close();
      }
    }
    // Live: runs keep appending while the projector works, so a batch is what arrived during the
    // previous batch's writes. From the first append to the last event projected.
    for (const { label, open } of stores) {
      const live = await open('live');
      const errors: string[] = [];
      const runner = new ProjectionRunner(store, live, [runsProjector], errorCollectingLogger(errors));
      await runner.start();
      await runner.waitFor(await store.headPosition(), 'run-x', 120_000);
      const from = await store.headPosition();
      const t0 = now();
      await appendRunBurst(store, Math.max(8, runs / 2), nodes);
      const appended = now() - t0;
      const head = await store.headPosition();
      const caughtUp = await runner.waitFor(head, 'run-x', 120_000);
      const elapsed = now() - t0;
      await runner.stop();
      if (!caughtUp) throw new Error(`live projection did not catch up${errors.length ? `: ${errors[0]}` : ''}`);
      const events = (await store.readAll({ after: from, categories: ['run'], maxCount: 1_000_000 })).length;
      report.figure(THROUGHPUT, `${label}: live, ${events} run events appended while projecting (batched), appended → projected`, events / (elapsed / 1000), 'events/s', {
        note: `appending alone took ${(appended / 1000).toFixed(1)} s, projected ${((elapsed - appended) / 1000).toFixed(1)} s after the last append`,
      });
      for (const c of runsProjector.collections) await live.collection(c).drop();
      await live.close();
    }
  } finally {
    await store.close();
    dir.cleanup();
  }
}
