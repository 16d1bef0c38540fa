import type { RecordedEvent } from '../../domain/shared/events.js';
import type { EventStore } from '../ports/event-store.js';
import type { StoredEvents } from '../ports/stored-events.js';
import type { SqliteEventStore } from './sqlite.js';

interface Row {
  position: number;
  id: string;
  stream_id: string;
  revision: number;
  type: string;
  schema_version: number;
  data: string;
  metadata: string;
}

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
        .prepare<unknown[], Row>(`SELECT * FROM events WHERE position > ? AND category IN (${marks}) ORDER BY position ASC LIMIT ?`)
        .all(after, ...categories, maxCount);
      return rows.map(
        (row): RecordedEvent => ({
          id: row.id,
          type: row.type,
          streamId: row.stream_id,
          revision: row.revision,
          position: row.position,
          schemaVersion: row.schema_version,
          data: JSON.parse(row.data),
          metadata: JSON.parse(row.metadata),
        }),
      );
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
