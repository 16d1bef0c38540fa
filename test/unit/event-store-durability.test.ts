import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { loadConfig } from '../../infra/config/index.js';

/** DURABILITY (issue 29, item 4): what the embedded store waits for before it acknowledges an append. */
describe('embedded event store durability', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'durability-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // SQLite's synchronous levels: 1 NORMAL (WAL written, not synced), 2 FULL (WAL synced at each commit).
  const synchronous = (store: SqliteEventStore) => Number(store.db.pragma('synchronous', { simple: true }));

  it('syncs every commit to disk by default (fsync), and only hands it to the OS with DURABILITY=process', async () => {
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
});
