import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { loadConfig } from '../../infra/config/index.js';
import type { SyncFile } from '../../infra/event-store/wal-sync.js';

/** DURABILITY (issue 29, item 4): what the embedded store waits for before it acknowledges an append. */
describe('embedded event store durability', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'durability-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // SQLite's synchronous levels: 1 NORMAL (WAL written, not synced), 2 FULL (WAL synced at each commit).
  const synchronous = (store: SqliteEventStore) => Number(store.db.pragma('synchronous', { simple: true }));

  it('keeps the connection at synchronous=FULL by default (fsync), and hands commits to the OS with DURABILITY=process', async () => {
    const byDefault = new SqliteEventStore(join(dir, 'a.db'));
    const process = new SqliteEventStore(join(dir, 'b.db'), { durability: 'process' });
    try {
      expect(synchronous(byDefault)).to.equal(2);
      expect(synchronous(process)).to.equal(1);
      expect(byDefault.db.pragma('journal_mode', { simple: true })).to.equal('wal');
    } finally {
      await byDefault.close();
      await process.close();
    }
  });

  it('reads DURABILITY from the environment: fsync by default, a bad value names the variable', () => {
    expect(loadConfig({}).DURABILITY).to.equal('fsync');
    expect(loadConfig({ DURABILITY: 'process' }).DURABILITY).to.equal('process');
    expect(() => loadConfig({ DURABILITY: 'sometimes' })).to.throw(/DURABILITY/);
  });

  describe('fsync off the event loop', () => {
    /** A sync of the WAL that returns when the test says so, counting its calls. */
    function heldSync() {
      const held: Array<(err: Error | null) => void> = [];
      const syncFile: SyncFile = (_fd, done) => void held.push(done);
      return { syncFile, held };
    }
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const metadata = { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: new Date(0).toISOString() };
    const event = (type: string) => [{ id: `${type}-${Math.random()}`, type, data: { type }, metadata }];

    it('acknowledges an append only after the WAL sync returned, and hides it from readers of the log until then', async () => {
      const { syncFile, held } = heldSync();
      const store = new SqliteEventStore(join(dir, 'held.db'), { syncFile });
      try {
        let acknowledged = false;
        const append = store.append('probe-1', event('A'), 'no_stream').then((r) => ((acknowledged = true), r));
        await turn();
        expect(held, 'one sync asked for').to.have.length(1);
        expect(acknowledged, 'not acknowledged before the sync').to.equal(false);
        // Committed, but the log's readers (projectors, consumers, the relay) do not see it yet.
        expect(await store.readAll({ after: 0 })).to.deep.equal([]);
        expect(await store.headPosition()).to.equal(0);
        held.shift()!(null);
        const result = await append;
        expect(result.revision).to.equal(0);
        expect((await store.readAll({ after: 0 })).map((e) => e.type)).to.deep.equal(['A']);
        expect(await store.headPosition()).to.equal(result.position);
      } finally {
        held.forEach((done) => done(null));
        await store.close();
      }
    });

    it('lets the appends committed during a sync share the next one', async () => {
      const { syncFile, held } = heldSync();
      const store = new SqliteEventStore(join(dir, 'group.db'), { syncFile });
      try {
        const first = store.append('probe-1', event('A'), 'no_stream');
        await turn();
        const more = [store.append('probe-2', event('B'), 'no_stream'), store.append('probe-3', event('C'), 'no_stream')];
        await turn();
        await turn();
        expect(held, 'the later appends wait for the running sync to end').to.have.length(1);
        held.shift()!(null);
        await first;
        await turn();
        expect(held, 'then one sync for both').to.have.length(1);
        held.shift()!(null);
        expect((await Promise.all(more)).map((r) => r.revision)).to.deep.equal([0, 0]);
        expect((await store.readAll({ after: 0 })).map((e) => e.type)).to.deep.equal(['A', 'B', 'C']);
      } finally {
        held.forEach((done) => done(null));
        await store.close();
      }
    });

    it('refuses an append whose sync failed', async () => {
      const { syncFile, held } = heldSync();
      const store = new SqliteEventStore(join(dir, 'failed.db'), { syncFile });
      try {
        const append = store.append('probe-1', event('A'), 'no_stream').catch((err: Error) => err.message);
        await turn();
        held.shift()!(new Error('EIO: disk gone'));
        expect(await append).to.equal('EIO: disk gone');
      } finally {
        held.forEach((done) => done(null));
        await store.close();
      }
    });

    it('syncs with DURABILITY=process never: the commit acknowledges', async () => {
      const { syncFile, held } = heldSync();
      const store = new SqliteEventStore(join(dir, 'process.db'), { durability: 'process', syncFile });
      try {
        expect((await store.append('probe-1', event('A'), 'no_stream')).revision).to.equal(0);
        expect(held).to.have.length(0);
      } finally {
        await store.close();
      }
    });
  });
});

