import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProbe, incrementProbe } from '../../commands/probes.js';
import type { CommandContext } from '../../commands/handle.js';
import { rebuildProjection } from '../../commands/operations.js';
import { operationDecider, projectionStreamId, type OperationEvent } from '../../domain/operations/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { createLogger } from '../../infra/logger/pino.js';
import { PROJECTION_BATCH_MAX, ProjectionRunner } from '../../app/projection-runner.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { SqliteReadStore } from '../../infra/read-store/sqlite.js';
import { probesProjector } from '../../projections/probes.js';
import type { Projector } from '../../projections/projector.js';
import { deciderSpec } from '../support/decider-spec.js';
import { waitUntil } from '../support/wait.js';
import { errorCollectingLogger } from '../bench/support.js';

const context = (): CommandContext => ({
  actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, now: new Date(),
});
const logger = createLogger('silent');

describe('projection runner', () => {
  let events: SqliteEventStore;
  let store: MemoryReadStore;
  let runner: ProjectionRunner;
  beforeEach(() => {
    events = new SqliteEventStore(':memory:');
    store = new MemoryReadStore();
  });
  afterEach(async () => {
    await runner?.stop();
    await events.close();
  });

  it('projects, and waitFor resolves once the projector reached a write', async () => {
    runner = new ProjectionRunner(events, store, [probesProjector], logger);
    await runner.start();
    const id = randomUUID();
    const { position } = await createProbe(events, context(), id, 'a');
    expect(await runner.waitFor(position!, `probe-${id}`, 2000)).to.equal(true);
    expect((await store.collection('probes').findOne({ _id: id }))?.name).to.equal('a');
  });

  it('waitFor answers false on timeout when the projector is behind', async () => {
    const stuck: Projector = { ...probesProjector, name: 'stuck', project: () => new Promise(() => {}) };
    runner = new ProjectionRunner(events, store, [stuck], logger, 'local', { stopTimeoutMs: 50 });
    await runner.start();
    const id = randomUUID();
    const { position } = await createProbe(events, context(), id, 'b');
    expect(await runner.waitFor(position!, `probe-${id}`, 100)).to.equal(false);
  });

  it('waitFor does not wait for a projector no request reads back (readYourWrites false)', async () => {
    const stuck: Projector = { ...probesProjector, name: 'stuck-sweep-only', collections: ['stuck'], readYourWrites: false, project: () => new Promise(() => {}) };
    runner = new ProjectionRunner(events, store, [probesProjector, stuck], logger, 'local', { stopTimeoutMs: 50 });
    await runner.start();
    const id = randomUUID();
    const { position } = await createProbe(events, context(), id, 'd');
    expect(await runner.waitFor(position!, `probe-${id}`, 2000), 'answered on the probes projector alone').to.equal(true);
    const stuckStatus = (await runner.status()).find((s) => s.name === 'stuck-sweep-only')!;
    expect(stuckStatus.position, 'the other projector is still behind').to.be.below(position!);
  });

  it('reports position, head and lag per projection', async () => {
    const id = randomUUID();
    await createProbe(events, context(), id, 'c');
    for (let i = 0; i < 4; i++) await incrementProbe(events, context(), id, 1);
    runner = new ProjectionRunner(events, store, [probesProjector], logger);
    const before = await runner.status();
    expect(before[0]).to.include({ name: 'probes', state: 'stopped', position: 0, lag: 5 });
    await runner.start();
    const head = await events.headPosition();
    await runner.waitFor(head, `probe-${id}`, 2000);
    const after = await runner.status();
    expect(after[0]).to.include({ name: 'probes', state: 'running', position: head, head, lag: 0 });
  });

  it('a rebuild from the log equals the incrementally built read model', async () => {
    runner = new ProjectionRunner(events, store, [probesProjector], logger);
    await runner.start();
    const ids = Array.from({ length: 20 }, () => randomUUID());
    for (const [i, id] of ids.entries()) {
      await createProbe(events, context(), id, `probe ${i}`);
      for (let k = 0; k < i % 4; k++) await incrementProbe(events, context(), id, k + 1);
    }
    const head = await events.headPosition();
    await runner.waitFor(head, `probe-${ids[0]}`, 5000);
    const incremental = await store.collection('probes').find({}, { sort: { _id: 1 } });
    const result = await runner.rebuild('probes');
    expect(result.events).to.equal((await events.readAll({ categories: ['probe'], maxCount: 10_000 })).length);
    const rebuilt = await store.collection('probes').find({}, { sort: { _id: 1 } });
    expect(rebuilt).to.deep.equal(incremental);
    expect(rebuilt).to.have.length(20);
  });

  it('a rebuild counts every event even when the checkpoint is written after the position moved', async () => {
    const id = randomUUID();
    await createProbe(events, context(), id, 'slow checkpoint');
    for (let k = 0; k < 4; k++) await incrementProbe(events, context(), id, 1);
    runner = new ProjectionRunner(events, store, [probesProjector], logger);
    await runner.start();
    await runner.waitFor(await events.headPosition(), `probe-${id}`, 2000);
    // A checkpoint store slower than the rebuild's look at the position (as on a loaded server).
    const set = store.checkpoints.set.bind(store.checkpoints);
    store.checkpoints.set = async (name, position) => {
      await new Promise((r) => setTimeout(r, 200)); // the fake's slowness, not a wait
      return set(name, position);
    };
    const result = await runner.rebuild('probes');
    expect(result.events).to.equal(5);
  });

  it('projects what arrived meanwhile as one batch, and writes one checkpoint per batch', async () => {
    const ids = Array.from({ length: 10 }, () => randomUUID());
    for (const id of ids) {
      await createProbe(events, context(), id, `burst ${id}`);
      for (let k = 0; k < 4; k++) await incrementProbe(events, context(), id, 1);
    }
    const sizes: number[] = [];
    const batching: Projector = {
      ...probesProjector,
      async projectBatch(batch, s) {
        sizes.push(batch.length);
        for (const e of batch) await probesProjector.project(e, s);
      },
    };
    const sets: number[] = [];
    const set = store.checkpoints.set.bind(store.checkpoints);
    store.checkpoints.set = async (name, position) => {
      sets.push(position);
      return set(name, position);
    };
    runner = new ProjectionRunner(events, store, [batching], logger);
    await runner.start();
    const head = await events.headPosition();
    expect(await runner.waitFor(head, `probe-${ids[0]}`, 5000)).to.equal(true);
    expect(sizes.reduce((a, b) => a + b, 0)).to.equal(50);
    expect(sizes.length, `batches ${sizes.join(',')}`).to.be.below(50);
    expect(Math.max(...sizes)).to.be.at.most(PROJECTION_BATCH_MAX);
    expect(sets, 'one checkpoint per batch, at its last event').to.have.length(sizes.length);
    expect(sets[sets.length - 1]).to.equal(head);
    for (const id of ids) expect((await store.collection('probes').findOne({ _id: id }))?.value).to.equal(4);
    // Live events after the catch-up still arrive, and waitFor sees them.
    const { position } = await incrementProbe(events, context(), ids[0], 10);
    expect(await runner.waitFor(position!, `probe-${ids[0]}`, 2000)).to.equal(true);
    expect((await store.collection('probes').findOne({ _id: ids[0] }))?.value).to.equal(14);
  });


  it('a coalescing projector writes events that come apart in time as one batch, and a read-your-writes wait ends the wait at once', async () => {
    const sizes: number[] = [];
    const coalescing: Projector = {
      ...probesProjector,
      // Far longer than the test may take: only a waiting reader or the stop can end the wait.
      coalesceMs: 60_000,
      async projectBatch(batch, s) {
        sizes.push(batch.length);
        for (const e of batch) await probesProjector.project(e, s);
      },
    };
    // The stop's own timeout is longer than the bound asserted on the stop below.
    runner = new ProjectionRunner(events, store, [coalescing], logger, 'local', { stopTimeoutMs: 5_000 });
    await runner.start();
    const id = randomUUID();
    await createProbe(events, context(), id, 'coalesced');
    for (let k = 0; k < 3; k++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await incrementProbe(events, context(), id, 1);
    }
    // Nobody waited: nothing was written while the events kept coming.
    expect(sizes).to.deep.equal([]);
    const head = await events.headPosition();
    expect(await runner.waitFor(head, `probe-${id}`, 2000), 'a waiting reader ends the coalescing wait').to.equal(true);
    expect(sizes, 'the four events in one batch').to.deep.equal([4]);
    expect((await store.collection('probes').findOne({ _id: id }))?.value).to.equal(3);
    // An event appended while a reader waits is not held back either.
    const waited = runner.waitFor(head + 1, `probe-${id}`, 2000);
    await incrementProbe(events, context(), id, 1);
    expect(await waited).to.equal(true);
    // The stop ends a coalescing wait: the loop does not outlive the runner.
    await incrementProbe(events, context(), id, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const stopping = performance.now();
    await runner.stop();
    expect(performance.now() - stopping, 'the stop did not wait for the coalescing timer').to.be.below(1_000);
    expect((await runner.status())[0].state).to.equal('stopped');
  });
  it('a batch that failed part-way is projected again from the last checkpoint, leaving what a clean run leaves', async () => {
    const ids = Array.from({ length: 6 }, () => randomUUID());
    for (const id of ids) await createProbe(events, context(), id, `x ${id}`);
    runner = new ProjectionRunner(events, store, [probesProjector], logger);
    await runner.start();
    const checkpoint = await events.headPosition();
    await runner.waitFor(checkpoint, `probe-${ids[0]}`, 2000);
    await runner.stop();
    for (const [i, id] of ids.entries()) for (let k = 0; k <= i; k++) await incrementProbe(events, context(), id, k + 1);
    const failing: Projector = {
      ...probesProjector,
      async projectBatch(batch, s) {
        for (const e of batch.slice(0, Math.ceil(batch.length / 2))) await probesProjector.project(e, s);
        throw new Error('crashed mid-batch');
      },
    };
    runner = new ProjectionRunner(events, store, [failing], logger);
    await runner.start();
    await waitUntil('the projection to fail mid-batch', async () => (await runner.status())[0].state === 'failed', 5_000, 10);
    expect((await runner.status())[0]).to.include({ state: 'failed', position: checkpoint });
    await runner.stop();
    runner = new ProjectionRunner(events, store, [probesProjector], logger);
    await runner.start();
    const head = await events.headPosition();
    expect(await runner.waitFor(head, `probe-${ids[0]}`, 5000)).to.equal(true);
    const clean = new MemoryReadStore();
    const cleanRunner = new ProjectionRunner(events, clean, [probesProjector], logger);
    await cleanRunner.start();
    await cleanRunner.waitFor(head, `probe-${ids[0]}`, 5000);
    await cleanRunner.stop();
    expect(await store.collection('probes').find({}, { sort: { _id: 1 } })).to.deep.equal(await clean.collection('probes').find({}, { sort: { _id: 1 } }));
    expect((await store.collection('probes').find({}, { sort: { _id: 1 } })).map((d) => d.value)).to.have.members(ids.map((_, i) => ((i + 1) * (i + 2)) / 2));
  });

  it('on a store that commits a batch at once, a waiter is not told current about rows the batch then rolls back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rollback-'));
    const sqlite = new SqliteReadStore(join(dir, 'read-models.db'));
    try {
      // Writes the first event's row, then fails on the second, in the same batch.
      const halfway: Projector = {
        name: 'halfway',
        categories: ['probe'],
        collections: ['halfway'],
        async setup() {},
        async project(event, s) {
          if (event.type === 'Second') throw new Error('fails after the first row');
          await s.collection('halfway').insertOne({ _id: event.id });
        },
      };
      runner = new ProjectionRunner(events, sqlite, [halfway], logger, 'local', { stopTimeoutMs: 50 });
      await runner.start();
      const meta = { ...context(), occurredAt: new Date().toISOString() };
      const id = randomUUID();
      await events.append(`probe-${id}`, [{ id: 'first', type: 'First', data: {}, metadata: meta }, { id: 'second', type: 'Second', data: {}, metadata: meta }], 'no_stream');
      const [first] = await events.readStream(`probe-${id}`);
      const current = await runner.waitFor(first.position, `probe-${id}`, 300);
      const row = await sqlite.collection('halfway').findOne({ _id: 'first' });
      expect({ current, row }, 'a current answer must be readable').to.deep.equal({ current: false, row: null });
      expect((await runner.status())[0].state).to.equal('failed');
    } finally {
      await runner.stop();
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('marks a projection failed with the error instead of skipping the event', async () => {
    const failing: Projector = { ...probesProjector, name: 'failing', project: async () => { throw new Error('boom'); } };
    runner = new ProjectionRunner(events, store, [failing], logger);
    await runner.start();
    await createProbe(events, context(), randomUUID(), 'd');
    await waitUntil('the projection to fail', async () => (await runner.status())[0].state === 'failed', 5_000, 10);
    const [status] = await runner.status();
    expect(status).to.include({ state: 'failed', lastError: 'boom', position: 0 });
  });

  it('a projection that failed starts again by itself from its checkpoint once the cause is gone (a read store that was down)', async () => {
    let down = true;
    const flaky: Projector = {
      ...probesProjector,
      async project(event, s) {
        if (down) throw new Error('read store unreachable');
        return probesProjector.project(event, s);
      },
    };
    runner = new ProjectionRunner(events, store, [flaky], logger);
    await runner.start();
    const id = randomUUID();
    await createProbe(events, context(), id, 'flaky');
    const { position } = await incrementProbe(events, context(), id, 5);
    await waitUntil('the projection to fail', async () => (await runner.status())[0].state === 'failed', 5_000, 10);
    expect((await runner.status())[0]).to.include({ lastError: 'read store unreachable', position: 0 });
    down = false;
    expect(await runner.waitFor(position!, `probe-${id}`, 10_000), 'caught up without a restart').to.equal(true);
    expect((await runner.status())[0]).to.include({ state: 'running' });
    expect((await store.collection('probes').findOne({ _id: id }))?.value).to.equal(5);
  });

  it('a batch that never settles is abandoned after the stall time and projected again from the checkpoint; the late answer changes nothing', async () => {
    let hang = true;
    let settleLate: (() => void) | null = null;
    const hanging: Projector = {
      ...probesProjector,
      async project(event, s) {
        if (hang) {
          hang = false;
          // A write the read store never answers, that settles only after the retry won.
          await new Promise<void>((resolve) => (settleLate = resolve));
          return;
        }
        return probesProjector.project(event, s);
      },
    };
    const errors: string[] = [];
    runner = new ProjectionRunner(events, store, [hanging], errorCollectingLogger(errors), 'local', { stallMs: 200 });
    await runner.start();
    const id = randomUUID();
    await createProbe(events, context(), id, 'stalled');
    const { position } = await incrementProbe(events, context(), id, 3);
    await waitUntil('the batch to be in flight', async () => ((await runner.status())[0].busyMs ?? -1) >= 0, 5_000, 5);
    expect(await runner.waitFor(position!, `probe-${id}`, 10_000), 'caught up without a restart').to.equal(true);
    expect((await store.collection('probes').findOne({ _id: id }))?.value).to.equal(3);
    expect(errors.join('\n')).to.match(/projection failed: a batch did not finish in \d+ s \(stalled\)/);
    const [status] = await runner.status();
    expect(status).to.include({ state: 'running', position: position!, busyMs: null });
    // The abandoned attempt settles now: neither its position nor its checkpoint goes back.
    settleLate!();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await runner.status())[0].position).to.equal(position!);
    expect(await store.checkpoints.get('projection:probes')).to.equal(position!);
  });

  it('carries out a rebuild requested as an event, and the request answers with its outcome', async () => {
    runner = new ProjectionRunner(events, store, [probesProjector], logger);
    await runner.start();
    const id = randomUUID();
    await createProbe(events, context(), id, 'e');
    await incrementProbe(events, context(), id, 2);
    const ports = { eventStore: events, projections: runner, newId: randomUUID };
    const answer = await rebuildProjection(ports, context(), 'probes', 5000);
    expect(answer).to.deep.include({ status: 'rebuilt', events: 2 }); // ProbeCreated, ProbeIncremented
    const audit = await events.readStream(projectionStreamId('probes'));
    expect(audit.map((e) => e.type)).to.deep.equal(['ProjectionRebuildRequested', 'ProjectionRebuilt']);
    expect((await store.collection('probes').findOne({ _id: id }))?.value).to.equal(2);
    const unknown = await rebuildProjection(ports, context(), 'nothing', 100).catch((e) => e);
    expect(unknown).to.be.instanceOf(DomainError);
    expect(unknown).to.include({ code: 'PROJECTION_NOT_FOUND', kind: 'not_found' });
  });
});

describe('operations decider', () => {
  const spec = deciderSpec(operationDecider);
  const at = '2026-01-01T00:00:00.000Z';
  const requested: OperationEvent = { type: 'ProjectionRebuildRequested', data: { name: 'probes', requestId: 'r1', requestedAt: at } };
  const rebuilt: OperationEvent = { type: 'ProjectionRebuilt', data: { name: 'probes', requestId: 'r1', events: 3, durationMs: 5, at } };

  it('records a request, and answers it once, with success or failure', () => {
    spec.given([]).when({ type: 'RequestRebuild', name: 'probes', requestId: 'r1', at }).then([requested]);
    spec.given([requested]).when({ type: 'RecordRebuild', name: 'probes', requestId: 'r1', events: 3, durationMs: 5, at }).then([rebuilt]);
    spec.given([requested, rebuilt]).when({ type: 'RecordRebuild', name: 'probes', requestId: 'r1', events: 3, durationMs: 5, at }).then([]);
    spec.given([requested]).when({ type: 'RecordRebuildFailure', name: 'probes', requestId: 'r1', reason: 'boom', at })
      .then([{ type: 'ProjectionRebuildFailed', data: { name: 'probes', requestId: 'r1', reason: 'boom', at } }]);
    spec.given([requested, rebuilt]).when({ type: 'RecordRebuildFailure', name: 'probes', requestId: 'r1', reason: 'late', at }).then([]);
    spec.given([]).when({ type: 'RecordRebuild', name: 'probes', requestId: 'unknown', events: 0, durationMs: 0, at }).then([]);
  });
});
