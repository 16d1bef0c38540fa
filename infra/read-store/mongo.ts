/**
 * MongoDB read store (official driver v6). Also runs on FerretDB v1.24, so it uses only what both
 * have: single-document writes, plain find/count/index commands; no transactions, sessions, change
 * streams, `$text`, `$lookup`, `$facet`, collation or `arrayFilters`. Input goes through the same
 * guards and pagination as the embedded store (domain/documents/store-rules.ts, ./cursor.ts) so both behave alike.
 */
import { MongoClient, MongoServerError } from 'mongodb';
import type { AnyBulkWriteOperation, Collection, Db, Document, MongoClientOptions, UpdateFilter } from 'mongodb';
import { MongoClientWatchdog } from './mongo-watchdog.js';
import type {
  BulkWriteResult, CheckpointStore, Doc, DocumentCollection, Filter, FindOptions, IndexSpec, Page, PageOptions,
  Projection, ReadStore, Sort, Update, WriteOp, WriteResult,
} from '../../ports/read-store.js';
import { DuplicateKeyError, QueryTimeoutError } from '../../ports/read-store.js';
import { planPage, withIdTieBreaker } from './cursor.js';
import { assertAllowedOperators, assertNoNestedArrays } from '../../domain/documents/store-rules.js';
import { assertFindWindow, assertPosition } from './guards.js';
import { newId } from './new-id.js';
import { UpdateError, seedFromFilter, validateUpdate } from '../../domain/documents/update-operators.js';

/** Holds projector/consumer positions; never listed as a user collection. */
const CHECKPOINTS = '_checkpoints';
const NAMESPACE_NOT_FOUND = 26;
const IMMUTABLE_FIELD = 66;
const MAX_TIME_MS_EXPIRED = 50;
/** Writes per bulk command (see `bulkWrite`). */
const BULK_CHUNK = 64;

export interface MongoReadStoreOptions {
  /** Prepended to every collection name, so several deployments or test runs can share a database. */
  prefix?: string;
  /** How long the server may stay unknown, while a new client reaches it, before the client is replaced (mongo-watchdog.ts). */
  wedgedAfterMs?: number;
  watchdogEveryMs?: number;
  /** An operation with no answer this long fails (and its connection is dropped); see SOCKET_TIMEOUT_MS. */
  socketTimeoutMs?: number;
  log?: (message: string, detail: Record<string, unknown>) => void;
}

/**
 * E11000, except that FerretDB v1.24 reports a unique violation by an update, a replacement or an
 * index build as InternalError (code 1) carrying its backend's message: SQLite's "UNIQUE constraint
 * failed", or PostgreSQL's unique_violation (SQLSTATE 23505: "duplicate key value violates unique
 * constraint" on a write, "could not create unique index" on an index build).
 */
function isDuplicateKey(err: unknown): err is MongoServerError {
  if (!(err instanceof MongoServerError)) return false;
  const writeErrors = (err as { writeErrors?: Array<{ code?: number }> }).writeErrors ?? [];
  if (err.code === 11000 || writeErrors.some((w) => w.code === 11000)) return true;
  return err.code === 1 && /UNIQUE constraint failed|\(SQLSTATE 23505\)/.test(err.message);
}

/** Maps server errors onto the port's errors, so callers never depend on driver error classes. */
async function translating<R>(collection: string, op: () => Promise<R>): Promise<R> {
  try {
    return await op();
  } catch (err) {
    // FerretDB fills in neither keyValue nor keyPattern: fall back to the server's message.
    if (isDuplicateKey(err)) throw new DuplicateKeyError(collection, err.keyValue ?? err.errmsg ?? err.message);
    if (err instanceof MongoServerError && err.code === IMMUTABLE_FIELD) throw new UpdateError(err.message, 'IMMUTABLE_FIELD');
    throw err;
  }
}

const toResult = (r: { matchedCount: number; modifiedCount: number; upsertedCount?: number }): WriteResult => ({
  matched: r.matchedCount,
  modified: r.modifiedCount,
  upserted: (r.upsertedCount ?? 0) > 0,
});

/** `_id` breaks ties (server order for equal keys is unspecified), as in the embedded store. */
const tieBroken = (sort?: Sort) => (sort && Object.keys(sort).length ? withIdTieBreaker(sort) : undefined);

function checkRead(filter: Filter, projection?: Projection): void {
  assertAllowedOperators(filter);
  assertAllowedOperators(projection);
}

/**
 * An upsert whose filter does not pin `_id` would get an ObjectId from the server; the port's
 * documents have string ids, so supply one the way the embedded store does.
 */
function withUpsertId(filter: Filter, update: Update): Update {
  if (seedFromFilter(filter)._id !== undefined || update.$set?._id !== undefined || update.$setOnInsert?._id !== undefined) return update;
  return { ...update, $setOnInsert: { ...update.$setOnInsert, _id: newId() } };
}

class MongoCollection<T extends Doc> implements DocumentCollection<T> {
  /** `resolve` answers the driver's collection on the store's current client (it may be replaced). */
  constructor(readonly name: string, private readonly resolve: () => Collection<Document>) {}

  private get coll(): Collection<Document> {
    return this.resolve();
  }

  async find(filter: Filter = {}, options: FindOptions = {}): Promise<T[]> {
    checkRead(filter, options.projection);
    assertFindWindow(options);
    const { skip, limit, projection, maxTimeMS } = options;
    const sort = tieBroken(options.sort);
    try {
      return (await this.coll.find(filter, { sort, skip, limit, projection, ...(maxTimeMS ? { maxTimeMS } : {}) }).toArray()) as unknown as T[];
    } catch (err) {
      if (err instanceof MongoServerError && err.code === MAX_TIME_MS_EXPIRED) throw new QueryTimeoutError(this.name, maxTimeMS ?? 0);
      throw err;
    }
  }

  async findOne(filter: Filter, options: { projection?: Projection; sort?: Sort } = {}): Promise<T | null> {
    checkRead(filter, options.projection);
    return (await this.coll.findOne(filter, { projection: options.projection, sort: tieBroken(options.sort) })) as T | null;
  }

  async page(filter: Filter, options: PageOptions): Promise<Page<T>> {
    checkRead(filter, options.projection);
    const plan = planPage(filter, options);
    const rows = await this.coll.find(plan.filter, { sort: plan.sort, limit: plan.fetchLimit, projection: plan.projection }).toArray();
    return plan.finish(rows as unknown as T[]);
  }

  async count(filter: Filter = {}): Promise<number> {
    checkRead(filter);
    return this.coll.countDocuments(filter);
  }

  async insertOne(doc: T): Promise<void> {
    if (typeof doc?._id !== 'string') throw new TypeError('document _id must be a string');
    assertNoNestedArrays(doc);
    // The driver adds nothing to a document that has an _id, but copy anyway: it is the caller's.
    await translating(this.name, () => this.coll.insertOne({ ...doc } as Document));
  }

  async replaceOne(filter: Filter, doc: T, options: { upsert?: boolean } = {}): Promise<WriteResult> {
    assertAllowedOperators(filter);
    if (Object.keys(doc).some((k) => k.startsWith('$'))) throw new UpdateError('replacement document must not contain update operators');
    assertNoNestedArrays(doc);
    return toResult(await translating(this.name, () => this.coll.replaceOne(filter, doc, { upsert: !!options.upsert })));
  }

  async updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<WriteResult> {
    this.checkWrite(filter, update);
    const effective = options.upsert ? withUpsertId(filter, update) : update;
    return toResult(await translating(this.name, () => this.coll.updateOne(filter, effective as UpdateFilter<Document>, { upsert: !!options.upsert })));
  }

  async updateMany(filter: Filter, update: Update): Promise<WriteResult> {
    this.checkWrite(filter, update);
    return toResult(await translating(this.name, () => this.coll.updateMany(filter, update as UpdateFilter<Document>)));
  }

  async deleteOne(filter: Filter): Promise<number> {
    assertAllowedOperators(filter);
    return (await this.coll.deleteOne(filter)).deletedCount;
  }

  async deleteMany(filter: Filter): Promise<number> {
    assertAllowedOperators(filter);
    return (await this.coll.deleteMany(filter)).deletedCount;
  }

  /** One ordered bulk write; the server stops at the first refused write, as the port requires. */
  async bulkWrite(ops: WriteOp<T>[]): Promise<BulkWriteResult> {
    if (!ops.length) return { matched: 0, modified: 0, upserted: 0, deleted: 0 };
    const wire = ops.map((op) => this.toWire(op));
    const result: BulkWriteResult = { matched: 0, modified: 0, upserted: 0, deleted: 0 };
    // FerretDB v1.24 (SQLite backend) never answers an update command of 100 statements or more,
    // so at most BULK_CHUNK per command; in order, so a refusal still stops what follows. It also
    // reports the index of a refused write wrongly: only the kind of the error is used.
    for (let i = 0; i < wire.length; i += BULK_CHUNK) {
      const r = await translating(this.name, () => this.coll.bulkWrite(wire.slice(i, i + BULK_CHUNK), { ordered: true }));
      result.matched += r.matchedCount;
      result.modified += r.modifiedCount;
      result.upserted += r.upsertedCount;
      result.deleted += r.deletedCount;
    }
    return result;
  }

  private toWire(op: WriteOp<T>): AnyBulkWriteOperation<Document> {
    if ('replaceOne' in op) {
      const { filter, replacement, upsert } = op.replaceOne;
      assertAllowedOperators(filter);
      if (Object.keys(replacement).some((k) => k.startsWith('$'))) throw new UpdateError('replacement document must not contain update operators');
      assertNoNestedArrays(replacement);
      return { replaceOne: { filter, replacement, upsert: !!upsert } };
    }
    if ('updateOne' in op) {
      const { filter, update, upsert } = op.updateOne;
      this.checkWrite(filter, update);
      return { updateOne: { filter, update: (upsert ? withUpsertId(filter, update) : update) as UpdateFilter<Document>, upsert: !!upsert } };
    }
    if ('deleteOne' in op) {
      assertAllowedOperators(op.deleteOne.filter);
      return { deleteOne: { filter: op.deleteOne.filter } };
    }
    if ('insertOne' in op) {
      const { document } = op.insertOne;
      if (typeof document?._id !== 'string') throw new TypeError('document _id must be a string');
      assertNoNestedArrays(document);
      return { insertOne: { document: { ...document } as Document } };
    }
    throw new TypeError(`unknown bulk write operation ${Object.keys(op as object).join(', ')}`);
  }

  async createIndex(spec: IndexSpec): Promise<void> {
    const options = { unique: !!spec.unique, ...(spec.name ? { name: spec.name } : {}) };
    await translating(this.name, () => this.coll.createIndex(spec.keys, options));
  }

  async drop(): Promise<void> {
    try {
      await this.coll.drop();
    } catch (err) {
      if (!(err instanceof MongoServerError && err.code === NAMESPACE_NOT_FOUND)) throw err;
    }
  }

  /** Same refusals as the embedded store, before the server sees anything. */
  private checkWrite(filter: Filter, update: Update): void {
    assertAllowedOperators(filter);
    assertAllowedOperators(update);
    validateUpdate(update);
  }
}

class MongoCheckpoints implements CheckpointStore {
  constructor(private readonly resolve: () => Collection<{ _id: string; position: number }>) {}

  private get coll(): Collection<{ _id: string; position: number }> {
    return this.resolve();
  }

  async get(name: string): Promise<number | null> {
    return (await this.coll.findOne({ _id: name }))?.position ?? null;
  }

  /** A plain set, not `$max`: resetting a projector to an earlier position must be possible. */
  async set(name: string, position: number): Promise<void> {
    assertPosition(position);
    await this.coll.updateOne({ _id: name }, { $set: { position } }, { upsert: true });
  }

  async delete(name: string): Promise<void> {
    await this.coll.deleteOne({ _id: name });
  }

  async list(): Promise<Array<{ name: string; position: number }>> {
    const rows = await this.coll.find({}).sort({ _id: 1 }).toArray();
    return rows.map((r) => ({ name: r._id, position: r.position }));
  }
}

const MAX_POOL_SIZE = 32;
/**
 * The driver waits for an answer for ever by default. FerretDB 1.24, just restarted under load,
 * left a few commands unanswered for good (faulted soak, issue 37): the projections that sent them
 * stood still, `running`, until the end. With a socket timeout such a command fails, its
 * connection is dropped, and the projection starts again from its checkpoint. Far above any
 * command of ours: searches stop at 5 s (`maxTimeMS`), bulk writes go in chunks of 64.
 */
const SOCKET_TIMEOUT_MS = 60_000;

export class MongoReadStore implements ReadStore {
  readonly adapter = 'mongodb';
  readonly checkpoints: CheckpointStore;
  private readonly prefix: string;
  private readonly watchdog: MongoClientWatchdog;

  private constructor(private client: MongoClient, private db: Db, url: string, clientOptions: MongoClientOptions, options: MongoReadStoreOptions) {
    this.prefix = options.prefix ?? '';
    this.checkpoints = new MongoCheckpoints(() => this.db.collection(this.prefix + CHECKPOINTS));
    const dbName = db.databaseName;
    this.watchdog = new MongoClientWatchdog({
      url,
      clientOptions,
      wedgedAfterMs: options.wedgedAfterMs,
      checkEveryMs: options.watchdogEveryMs,
      log: options.log,
      replace: async (fresh) => {
        const old = this.client;
        this.client = fresh;
        this.db = fresh.db(dbName);
        this.watchdog.watch(fresh);
        // Operations still waiting on the old client fail as they would have; new ones use the fresh one.
        await old.close(true).catch(() => undefined);
      },
    });
    this.watchdog.watch(client);
  }

  static async connect(url: string, dbName: string, options: MongoReadStoreOptions = {}): Promise<MongoReadStore> {
    // Fail fast when the server is down instead of the driver's 30 s default. At most 32 connections
    // per process unless the URL says otherwise: a MongoDB-wire server behind a connection pool of its
    // own (FerretDB on PostgreSQL) stalls when clients run more commands at once than that pool holds.
    const pool = /[?&]maxPoolSize=/i.test(url) ? {} : { maxPoolSize: MAX_POOL_SIZE };
    const clientOptions: MongoClientOptions = { serverSelectionTimeoutMS: 5000, socketTimeoutMS: options.socketTimeoutMs ?? SOCKET_TIMEOUT_MS, ...pool };
    const client = new MongoClient(url, clientOptions);
    try {
      await client.connect();
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    return new MongoReadStore(client, client.db(dbName), url, clientOptions, options);
  }

  collection<T extends Doc = Doc>(name: string): DocumentCollection<T> {
    const physical = this.prefix + name;
    return new MongoCollection<T>(name, () => this.db.collection(physical));
  }

  async listCollections(): Promise<string[]> {
    const all = await this.db.listCollections({}, { nameOnly: true }).toArray();
    return all
      .map((c) => c.name)
      .filter((n) => n.startsWith(this.prefix) && !n.startsWith('system.'))
      .map((n) => n.slice(this.prefix.length))
      .filter((n) => n !== CHECKPOINTS)
      .sort();
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    try {
      await this.db.command({ ping: 1 });
      return { ok: true };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    this.watchdog.stop();
    await this.client.close();
  }
}
