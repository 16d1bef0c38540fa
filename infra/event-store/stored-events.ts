import type { EventStore } from '../../ports/event-store.js';
import type { StoredEvents } from '../../ports/stored-events.js';
import { toRecorded, type EventRow, type SqliteEventStore } from './sqlite.js';

/**
 * StoredEvents on the SQLite log. Reads go to the table itself (the store's in-memory window of
 * recent appends would still hold what was just re-written). A rewrite runs in one transaction
 * with `secure_delete` on, so the freed bytes of the old rows are zeroed, then checkpoints and
 * truncates the WAL, so no copy of the old pages stays in the `-wal` file either.
 */
export function sqliteStoredEvents(store: SqliteEventStore): StoredEvents {
  const { db } = store;
  const update = db.prepare<[string, number, number]>('UPDATE events SET data = ?, schema_version = ? WHERE position = ?');
  const rewriteAll = db.transaction((events: Array<{ position: number; data: unknown; schemaVersion: number }>) => {
    for (const e of events) update.run(JSON.stringify(e.data ?? null), e.schemaVersion, e.position);
  });
  return {
    adapter: store.adapter,
    async read({ after = 0, maxCount, categories }) {
      const marks = categories.map(() => '?').join(',');
      const rows = db
        .prepare<unknown[], EventRow>(`SELECT * FROM events WHERE position > ? AND category IN (${marks}) ORDER BY position ASC LIMIT ?`)
        .all(after, ...categories, maxCount);
      return rows.map(toRecorded);
    },
    async rewrite(events) {
      if (events.length === 0) return;
      const previous = db.pragma('secure_delete', { simple: true });
      db.pragma('secure_delete = ON');
      try {
        rewriteAll(events);
      } finally {
        db.pragma(`secure_delete = ${Number(previous) ? 'ON' : 'OFF'}`);
      }
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
  };
}

/** An append-only store (EventStoreDB): read as stored, never rewritten. */
export function appendOnlyStoredEvents(store: EventStore): StoredEvents {
  return { adapter: store.adapter, read: (options) => store.readAll(options), rewrite: null };
}
