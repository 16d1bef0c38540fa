/**
 * What the SQLite read store adds to the ReadStore contract (read-store.test.ts runs that on it):
 * its documents, indexes and checkpoints outlive the process, and `atomically` commits a batch
 * with its checkpoint or neither, without taking in writes from outside the batch.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { SqliteReadStore } from '../../infra/read-store/sqlite.js';
import { DuplicateKeyError } from '../../ports/read-store.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { ProjectionRunner } from '../../app/projection-runner.js';
import { createLogger } from '../../infra/logger/pino.js';
import { probesProjector } from '../../projections/probes.js';
import { probeStreamId } from '../../domain/probes/index.js';
import { probeCreated } from '../bench/support.js';
import { waitUntil } from '../support/test-service.js';

describe('SQLite read store', () => {
  let dir: string;
  let file: string;
  const open: SqliteReadStore[] = [];
  const openStore = () => {
    const store = new SqliteReadStore(file);
    open.push(store);
    return store;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rs-sqlite-'));
    file = join(dir, 'read-models.db');
  });
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps documents, insertion order, indexes and checkpoints across a reopen', async () => {
    const first = openStore();
    const runs = first.collection('runs');
    await runs.createIndex({ keys: { flowId: 1, at: -1 } });
    await runs.createIndex({ keys: { key: 1 }, unique: true });
    for (let i = 0; i < 300; i++) await runs.insertOne({ _id: `r${String(299 - i).padStart(3, '0')}`, flowId: `f${i % 3}`, key: `k${i}`, at: new Date(Date.UTC(2026, 0, 1, 0, i)) });
    await runs.updateOne({ _id: 'r299' }, { $set: { flowId: 'f9' } });
    await first.checkpoints.set('projection:runs', 300);
    await first.close();

    const second = openStore();
    const again = second.collection('runs');
    expect(await again.count()).to.equal(300);
    // Unsorted reads come back in insertion order; an update keeps a document's place.
    expect((await again.find({}, { limit: 2 })).map((d) => d._id)).to.deep.equal(['r299', 'r298']);
    const doc = await again.findOne({ _id: 'r299' });
    expect(doc?.at).to.be.instanceOf(Date);
    expect(doc?.flowId).to.equal('f9');
    expect(await again.count({ flowId: 'f0' })).to.equal(99);
    expect(await again.count({ flowId: 'f9' })).to.equal(1);
    const error = await again.insertOne({ _id: 'x', key: 'k5' }).catch((e) => e);
    expect(error).to.be.instanceOf(DuplicateKeyError);
    expect(await second.checkpoints.get('projection:runs')).to.equal(300);
    expect(await second.listCollections()).to.deep.equal(['runs']);
  });

  it('looks equality on an index\'s first field up in its rows, not by scanning', async () => {
    const store = openStore();
    const c = store.collection('lookups');
    await c.createIndex({ keys: { owner: 1, at: 1 } });
    await c.insertOne({ _id: 'a', owner: 'u1', tags: ['x'] });
    await c.insertOne({ _id: 'b', owner: 'u2' });
    await c.replaceOne({ _id: 'a' }, { _id: 'a', owner: 'u2' });
    const raw = new Database(file, { readonly: true });
    try {
      const rows = raw.prepare("SELECT key, id FROM rm_lookup WHERE coll = 'lookups' ORDER BY key, id").all();
      expect(rows).to.deep.equal([{ key: 'su2', id: 'a' }, { key: 'su2', id: 'b' }]);
    } finally {
      raw.close();
    }
    expect((await c.find({ owner: 'u2' }, { sort: { _id: -1 } })).map((d) => d._id)).to.deep.equal(['b', 'a']);
    await c.deleteOne({ _id: 'b' });
    expect(await c.count({ owner: 'u2' })).to.equal(1);
  });

  it('atomically: a batch and its checkpoint commit together, and a failed batch leaves neither', async () => {
    const store = openStore();
    const c = store.collection('batch');
    await store.atomically(async (batch) => {
      await batch.collection('batch').insertOne({ _id: 'kept', v: 1 });
      await batch.checkpoints.set('projection:batch', 1);
    });
    const failure = await store
      .atomically(async (batch) => {
        const inBatch = batch.collection('batch');
        await inBatch.updateOne({ _id: 'kept' }, { $set: { v: 2 } });
        await inBatch.insertOne({ _id: 'lost' });
        await inBatch.createIndex({ keys: { v: 1 }, unique: true });
        // A batch inside the batch joins it (and is rolled back with it).
        await batch.atomically!(async (nested) => nested.checkpoints.set('projection:batch', 2));
        // Inside the batch, its own writes are visible, through the store too.
        expect((await c.findOne({ _id: 'kept' }))?.v).to.equal(2);
        throw new Error('crash mid-batch');
      })
      .catch((e: Error) => e.message);
    expect(failure).to.equal('crash mid-batch');
    expect(await c.find({})).to.deep.equal([{ _id: 'kept', v: 1 }]);
    expect(await store.checkpoints.get('projection:batch')).to.equal(1);
    // The index made inside the rolled-back batch is gone: a duplicate value is accepted.
    await c.insertOne({ _id: 'again', v: 1 });
    expect(await c.count({ v: 1 })).to.equal(2);
  });

  it('a write from outside a running batch waits for it, and is not rolled back with it', async () => {
    const store = openStore();
    const c = store.collection('outside');
    let inside!: () => void;
    const batchStarted = new Promise<void>((resolve) => (inside = resolve));
    let finish!: () => void;
    const batchMayEnd = new Promise<void>((resolve) => (finish = resolve));
    const batch = store
      .atomically(async (view) => {
        await view.collection('outside').insertOne({ _id: 'batch' });
        inside();
        await batchMayEnd;
        throw new Error('batch fails');
      })
      .catch(() => 'rolled back');
    await batchStarted;
    let outsideDone = false;
    const outside = c.insertOne({ _id: 'outside' }).then(() => (outsideDone = true));
    // A read does not wait, and sees the running batch's write.
    expect(await c.findOne({ _id: 'batch' })).to.deep.equal({ _id: 'batch' });
    // Negative check without a clock: one turn of the event loop, by which an ungated write (SQLite
    // runs synchronously here) would have finished.
    await new Promise((resolve) => setImmediate(resolve));
    expect(outsideDone, 'the outside write waited for the batch').to.equal(false);
    finish();
    expect(await batch).to.equal('rolled back');
    await outside;
    expect((await c.find({})).map((d) => d._id)).to.deep.equal(['outside']);
  });

  it('read models ahead of the log (its file replaced) are dropped and rebuilt at start, not resumed', async () => {
    const events = new SqliteEventStore(join(dir, 'events.db'));
    try {
      await events.append(probeStreamId('p1'), [probeCreated('p1')], 'no_stream');
      const store = openStore();
      await store.collection('probes').insertOne({ _id: 'from-another-log', name: 'stale', value: 7, version: 3 });
      await store.checkpoints.set('projection:probes', 5_000);
      const runner = new ProjectionRunner(events, store, [probesProjector], createLogger('silent'));
      await runner.start();
      try {
        await waitUntil('the rebuild reached the head', async () => ((await store.checkpoints.get('projection:probes')) ?? 0) === (await events.headPosition()), 10_000);
        expect((await store.collection('probes').find({})).map((d) => d._id)).to.deep.equal(['p1']);
      } finally {
        await runner.stop();
      }
    } finally {
      await events.close();
    }
  });
});
