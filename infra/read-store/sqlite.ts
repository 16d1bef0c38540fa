/**
 * The embedded default's read store: collections on disk in one SQLite file
 * (DATA_DIR/read-models.db), with the checkpoints of the projectors that wrote them. A restart
 * resumes each projector from its checkpoint instead of folding the whole log again, and memory
 * holds SQLite's page cache (READ_MODEL_CACHE_MB), not the data.
 *
 * `atomically` runs a projector's batch and its checkpoint as one transaction, so a crash leaves
 * either both or neither. The batch writes through the view of the store it is given; writes
 * through the store itself wait for the batch to end (one lock per store), so they never join, and
 * never get rolled back with, somebody else's batch. Reads do not wait: on this one connection they
 * see a running batch's writes, as read-your-writes wants.
 *
 * No AsyncLocalStorage tells a batch's writes from the others (it did until issue 29): on Node 20
 * one AsyncLocalStorage in use puts promise hooks on every promise of the process, which cost
 * about 7 % of a 50-node in-process chain.
 */
import Database from 'better-sqlite3';
import type { BulkWriteResult, CheckpointStore, Doc, DocumentCollection, Filter, IndexSpec, Page, PageOptions, ReadStore, Update, WriteOp, WriteResult } from '../../ports/read-store.js';
import { SqliteCheckpointStore } from '../checkpoints/sqlite.js';
import { assertPosition } from './guards.js';
import { READ_MODEL_SCHEMA, SqliteDocs, prepareReadModelStatements, type ReadModelStatements } from './sqlite-docs.js';
import { StoredCollection } from './stored-collection.js';

/** One holder at a time, in arrival order. */
class Lock {
  private tail: Promise<void> = Promise.resolve();
  async acquire(): Promise<() => void> {
    let release!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    return release;
  }
}

export interface SqliteReadStoreOptions {
  /** SQLite's page cache for this file, in MB: the memory the read models may hold. */
  cacheMb?: number;
}

export class SqliteReadStore implements ReadStore {
  readonly adapter = 'sqlite';
  readonly checkpoints: CheckpointStore;
  readonly db: Database.Database;
  private readonly sql: ReadModelStatements;
  private readonly collections = new Map<string, { docs: SqliteDocs; stored: StoredCollection<Doc>; collection: DocumentCollection<Doc> }>();
  private readonly lock = new Lock();
  /** What a batch writes through: the same collections and checkpoints, without the lock it holds. */
  private readonly batchView: ReadStore;
  private readonly listNames;

  constructor(readonly file: string, options: SqliteReadStoreOptions = {}) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // A read model can always be projected again from the log, so a power cut may cost its last
    // batches but never its consistency with its checkpoint (WAL commits are atomic).
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma(`cache_size = -${Math.max(1, Math.round((options.cacheMb ?? 32) * 1024))}`);
    this.db.exec(READ_MODEL_SCHEMA);
    this.sql = prepareReadModelStatements(this.db);
    this.listNames = this.db.prepare<[], string>('SELECT name FROM rm_collections ORDER BY name').pluck();
    const checkpoints = new SqliteCheckpointStore(this.db);
    const checkpointsVia = (write: <T>(fn: () => Promise<T>) => Promise<T>): CheckpointStore => ({
      get: (name) => checkpoints.get(name),
      list: () => checkpoints.list(),
      set: (name, position) => {
        assertPosition(position);
        return write(() => checkpoints.set(name, position));
      },
      delete: (name) => write(() => checkpoints.delete(name)),
    });
    this.checkpoints = checkpointsVia((fn) => this.write(fn));
    this.batchView = {
      adapter: this.adapter,
      collection: <T extends Doc = Doc>(name: string) => this.entry(name).stored as unknown as DocumentCollection<T>,
      listCollections: () => this.listCollections(),
      checkpoints: checkpointsVia((fn) => fn()),
      // A batch inside the batch joins it.
      atomically: (fn) => fn(this.batchView),
      health: () => this.health(),
      close: () => this.close(),
    };
  }

  collection<T extends Doc = Doc>(name: string): DocumentCollection<T> {
    return this.entry(name).collection as unknown as DocumentCollection<T>;
  }

  private entry(name: string) {
    let entry = this.collections.get(name);
    if (!entry) {
      const docs = new SqliteDocs(name, this.db, this.sql);
      const stored = new StoredCollection<Doc>(name, docs);
      entry = { docs, stored, collection: this.gated(stored) };
      this.collections.set(name, entry);
    }
    return entry;
  }

  async listCollections(): Promise<string[]> {
    return this.listNames.all();
  }

  /**
   * The writes `fn` makes through the view it is given (and a checkpoint set through it) commit
   * together or not at all.
   */
  async atomically<T>(fn: (batch: ReadStore) => Promise<T>): Promise<T> {
    const release = await this.lock.acquire();
    try {
      this.db.exec('BEGIN');
      try {
        const out = await fn(this.batchView);
        this.db.exec('COMMIT');
        return out;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        for (const { docs } of this.collections.values()) docs.forgetIndexes();
        throw err;
      }
    } finally {
      release();
    }
  }

  async health() {
    try {
      this.db.prepare('SELECT 1').get();
      return { ok: true };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** A write from outside a batch: after the running batch, never inside it. */
  private async write<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.lock.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private gated<T extends Doc>(c: StoredCollection<T>): DocumentCollection<T> {
    const write = <R>(fn: () => Promise<R>) => this.write(fn);
    return {
      name: c.name,
      find: (filter, options) => c.find(filter, options),
      findOne: (filter, options) => c.findOne(filter, options),
      page: (filter: Filter, options: PageOptions): Promise<Page<T>> => c.page(filter, options),
      count: (filter) => c.count(filter),
      insertOne: (doc: T) => write(() => c.insertOne(doc)),
      replaceOne: (filter: Filter, doc: T, options?: { upsert?: boolean }): Promise<WriteResult> => write(() => c.replaceOne(filter, doc, options)),
      updateOne: (filter: Filter, update: Update, options?: { upsert?: boolean }) => write(() => c.updateOne(filter, update, options)),
      updateMany: (filter: Filter, update: Update) => write(() => c.updateMany(filter, update)),
      deleteOne: (filter: Filter) => write(() => c.deleteOne(filter)),
      deleteMany: (filter: Filter) => write(() => c.deleteMany(filter)),
      bulkWrite: (ops: WriteOp<T>[]): Promise<BulkWriteResult> => write(() => c.bulkWrite(ops)),
      createIndex: (spec: IndexSpec) => write(() => c.createIndex(spec)),
      drop: () => write(() => c.drop()),
    };
  }
}
