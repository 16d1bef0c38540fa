/**
 * Read store port: documents with MongoDB query semantics. Adapters: embedded (mingo, in memory)
 * and MongoDB (also FerretDB). Only the subset both support is allowed here: no transactions,
 * no $text, no $lookup/$facet, no change streams.
 */
export type Doc = { _id: string } & Record<string, unknown>;
export type Filter = Record<string, unknown>;
export type Sort = Record<string, 1 | -1>;
export type Projection = Record<string, 0 | 1>;
/** Update operators the projections may use (their rules are the documents context's). */
import type { Update } from '../domain/documents/update-operators.js';
export type { Update };
/** What both adapters refuse in a filter, an update or a projection (thrown by either adapter). */
export { ForbiddenOperatorError, UnsupportedError } from '../domain/documents/store-rules.js';
export { UpdateError } from '../domain/documents/update-operators.js';

export interface FindOptions {
  sort?: Sort;
  limit?: number;
  skip?: number;
  projection?: Projection;
  /** Give up after this long (MongoDB's maxTimeMS; the embedded store checks while it scans): QueryTimeoutError. */
  maxTimeMS?: number;
}

export interface PageOptions {
  /** `_id` is always appended as the final tie-breaker so pages are stable. */
  sort?: Sort;
  limit: number;
  /** Opaque cursor returned as `nextCursor` by the previous page. */
  cursor?: string | null;
  projection?: Projection;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface WriteResult {
  matched: number;
  modified: number;
  upserted: boolean;
}

/**
 * One write of a `bulkWrite`. Applied in order; a projector batches its writes for many events
 * into one call (one round trip on MongoDB) and guards each by version, so replaying changes nothing.
 */
export type WriteOp<T extends Doc = Doc> =
  /** Refused with DuplicateKeyError when the `_id` exists. Far cheaper than an upsert on FerretDB 1.24/SQLite, whose writes by filter scan the collection. */
  | { insertOne: { document: T } }
  | { replaceOne: { filter: Filter; replacement: T; upsert?: boolean } }
  | { updateOne: { filter: Filter; update: Update; upsert?: boolean } }
  | { deleteOne: { filter: Filter } };

export interface BulkWriteResult {
  matched: number;
  modified: number;
  upserted: number;
  deleted: number;
}

export interface IndexSpec {
  keys: Record<string, 1 | -1>;
  unique?: boolean;
  name?: string;
}

export interface DocumentCollection<T extends Doc = Doc> {
  readonly name: string;
  find(filter?: Filter, options?: FindOptions): Promise<T[]>;
  findOne(filter: Filter, options?: { projection?: Projection; sort?: Sort }): Promise<T | null>;
  page(filter: Filter, options: PageOptions): Promise<Page<T>>;
  count(filter?: Filter): Promise<number>;
  /** Throws DuplicateKeyError on a duplicate `_id` or unique-index value. */
  insertOne(doc: T): Promise<void>;
  replaceOne(filter: Filter, doc: T, options?: { upsert?: boolean }): Promise<WriteResult>;
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<WriteResult>;
  updateMany(filter: Filter, update: Update): Promise<WriteResult>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
  /**
   * The writes in order, as one batch (one round trip per run of same-kind writes on MongoDB).
   * Ordered, not atomic: the first refused write (DuplicateKeyError, as the single writes) stops
   * the batch with the writes before it applied and the rest not, so callers guard by version and
   * may simply write again. A guarded upsert (`{_id, version: {$lt: n}}`) of a document that is
   * already newer is such a refusal.
   */
  bulkWrite(ops: WriteOp<T>[]): Promise<BulkWriteResult>;
  createIndex(spec: IndexSpec): Promise<void>;
  /** Removes every document and index; the collection can be used again afterwards. */
  drop(): Promise<void>;
}

/** Stored positions of projectors, relays and consumers, by name. */
export interface CheckpointStore {
  get(name: string): Promise<number | null>;
  set(name: string, position: number): Promise<void>;
  delete(name: string): Promise<void>;
  list(): Promise<Array<{ name: string; position: number }>>;
}

export interface ReadStore {
  readonly adapter: string;
  collection<T extends Doc = Doc>(name: string): DocumentCollection<T>;
  listCollections(): Promise<string[]>;
  readonly checkpoints: CheckpointStore;
  /**
   * Where the adapter can: the writes `fn` makes through the store it is given (`batch`), and a
   * checkpoint set through it, commit together or not at all (the embedded SQLite store); writes
   * through this store itself wait for the batch. Absent where it cannot (memory, MongoDB without
   * transactions): there, projectors rely on their version guards alone.
   */
  atomically?<T>(fn: (batch: ReadStore) => Promise<T>): Promise<T>;
  health(): Promise<{ ok: boolean; detail?: string }>;
  close(): Promise<void>;
}

export class DuplicateKeyError extends Error {
  constructor(readonly collection: string, readonly key: unknown) {
    super(`duplicate key in ${collection}: ${JSON.stringify(key)}`);
    this.name = 'DuplicateKeyError';
  }
}

/** A query ran past its `maxTimeMS`. */
export class QueryTimeoutError extends Error {
  constructor(readonly collection: string, readonly maxTimeMS: number) {
    super(`query on ${collection} exceeded its time limit of ${maxTimeMS} ms`);
    this.name = 'QueryTimeoutError';
  }
}

export class InvalidCursorError extends Error {
  constructor() {
    super('cursor is malformed or does not match this query');
    this.name = 'InvalidCursorError';
  }
}
