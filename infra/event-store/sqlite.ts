import Database from 'better-sqlite3';
import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { categoryOf, type RecordedEvent } from '../../domain/shared/events.js';
import {
  ConcurrencyError,
  type AppendResult,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type SubscribeOptions,
} from '../ports/event-store.js';
import { pollingSubscription } from './polling-subscription.js';

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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  stream_id TEXT NOT NULL,
  category TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE INDEX IF NOT EXISTS events_category ON events (category, position);
CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
`;

function toRecorded(row: Row): RecordedEvent {
  return {
    id: row.id,
    type: row.type,
    streamId: row.stream_id,
    revision: row.revision,
    position: row.position,
    schemaVersion: row.schema_version,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
  };
}

/**
 * Embedded event store: one SQLite table in WAL mode. `synchronous=NORMAL` survives a killed
 * process (the WAL is written before the append returns); only an OS crash can lose the last
 * transactions, which is the documented trade-off for throughput.
 */
export class SqliteEventStore implements EventStore {
  readonly adapter = 'sqlite';
  readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private readonly stmts;
  private readonly appendTransaction: Database.Transaction<typeof this.appendTx>;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    this.appended.setMaxListeners(0);
    this.stmts = {
      lastRevision: this.db.prepare<[string], { r: number | null }>('SELECT MAX(revision) AS r FROM events WHERE stream_id = ?'),
      insert: this.db.prepare(
        'INSERT INTO events (id, stream_id, category, revision, type, schema_version, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      forwards: this.db.prepare<[string, number, number], Row>(
        'SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision ASC LIMIT ?',
      ),
      backwards: this.db.prepare<[string, number, number], Row>(
        'SELECT * FROM events WHERE stream_id = ? AND revision <= ? ORDER BY revision DESC LIMIT ?',
      ),
      all: this.db.prepare<[number, number], Row>('SELECT * FROM events WHERE position > ? ORDER BY position ASC LIMIT ?'),
      head: this.db.prepare<[], { p: number | null }>('SELECT MAX(position) AS p FROM events'),
    };
    this.appendTransaction = this.db.transaction(this.appendTx);
  }

  private readonly appendTx = (streamId: string, events: NewEvent[], expected: ExpectedRevision): AppendResult => {
    const last = this.stmts.lastRevision.get(streamId)?.r ?? null;
    const actual = last === null ? 'no_stream' : last;
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && last === null) ||
      (expected === 'stream_exists' && last !== null) ||
      (typeof expected === 'number' && last === expected);
    if (!ok) throw new ConcurrencyError(streamId, expected, actual);
    const category = categoryOf(streamId);
    let revision = last ?? -1;
    let position = 0;
    for (const e of events) {
      revision += 1;
      const info = this.stmts.insert.run(
        e.id,
        streamId,
        category,
        revision,
        e.type,
        e.schemaVersion ?? 1,
        JSON.stringify(e.data ?? null),
        JSON.stringify(e.metadata),
      );
      position = Number(info.lastInsertRowid);
    }
    return { revision, position };
  };

  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const result = this.appendTransaction.immediate(streamId, events, expected);
    this.appended.emit('appended', result.position);
    return result;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const rows =
      options.direction === 'backwards'
        ? this.stmts.backwards.all(streamId, options.fromRevision ?? Number.MAX_SAFE_INTEGER, max)
        : this.stmts.forwards.all(streamId, options.fromRevision ?? 0, max);
    return rows.map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAllSync(options);
  }

  private readAllSync(options: ReadAllOptions): RecordedEvent[] {
    const after = options.after ?? 0;
    const max = options.maxCount ?? 1000;
    if (!options.categories || options.categories.length === 0) return this.stmts.all.all(after, max).map(toRecorded);
    const marks = options.categories.map(() => '?').join(',');
    const rows = this.db
      .prepare<unknown[], Row>(`SELECT * FROM events WHERE position > ? AND category IN (${marks}) ORDER BY position ASC LIMIT ?`)
      .all(after, ...options.categories, max);
    return rows.map(toRecorded);
  }

  subscribe(options: SubscribeOptions = {}): EventSubscription {
    const subscription = pollingSubscription({
      after: options.after ?? 0,
      read: (after) => this.readAll({ after, maxCount: 500, categories: options.categories }),
      onAppend: (listener) => {
        this.appended.on('appended', listener);
        return () => this.appended.off('appended', listener);
      },
      // Another process may write to the same file; poll as a fallback to the in-process signal.
      pollMs: 250,
    });
    // Closing the store ends its subscriptions instead of leaving them to poll a closed database.
    const onClosed = () => void subscription.close();
    this.appended.once('closed', onClosed);
    return {
      [Symbol.asyncIterator]: () => subscription[Symbol.asyncIterator](),
      close: async () => {
        this.appended.off('closed', onClosed);
        await subscription.close();
      },
    };
  }

  async headPosition(): Promise<number> {
    return this.stmts.head.get()?.p ?? 0;
  }

  async health() {
    try {
      this.stmts.head.get();
      return { ok: true };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    this.appended.emit('closed');
    // Let the subscriptions' read loops observe the close before the handle goes away.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.db.open) this.db.close();
  }
}
