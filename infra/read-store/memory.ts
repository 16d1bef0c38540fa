/**
 * Embedded read store: documents in Maps, filters and sorting from ./memory-query.ts (MongoDB
 * semantics from mingo, hot shapes without it), update operators from
 * domain/documents/update-operators.ts, pagination from ./cursor.ts (shared with MongoDB). `_id`
 * equality / `$in` are Map lookups and unique indexes are Maps from encoded key to `_id`. Stored
 * documents are private copies: everything goes in and comes out through deepCopy.
 */
import { isEqual, resolve } from 'mingo/util';
import type { BulkWriteResult, CheckpointStore, Doc, DocumentCollection, Filter, FindOptions, IndexSpec, Page, PageOptions, Projection, ReadStore, Sort, Update, WriteOp, WriteResult } from '../ports/read-store.js';
import { DuplicateKeyError, QueryTimeoutError } from '../ports/read-store.js';
import { planPage, withIdTieBreaker } from './cursor.js';
import { assertAllowedOperators, assertNoNestedArrays } from '../../domain/documents/store-rules.js';
import { assertFindWindow, assertPosition } from './guards.js';
import { newId } from './new-id.js';
import { EqualityIndex, UniqueIndex, equalityOperand } from './memory-index.js';
import { UpdateError, applyUpdate, deepCopy, seedFromFilter, validateUpdate } from '../../domain/documents/update-operators.js';
import { compileFilter, matches, project, sortRows } from './memory-query.js';

type Obj = Record<string, unknown>;
/** Longest stretch a read keeps the event loop before letting other work run. */
const SLICE_MS = 10;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const NOTHING: WriteResult = { matched: 0, modified: 0, upserted: false };

// ---------------------------------------------------------------- collection

class MemoryCollection<T extends Doc> implements DocumentCollection<T> {
  private docs = new Map<string, Obj>();
  private indexes = new Map<string, IndexSpec>();
  private uniques: UniqueIndex[] = [];
  /** Lookups by value for the first field of every index (see ./memory-index.ts). */
  private lookups = new Map<string, EqualityIndex>();
  /** MongoDB lists a collection once something created it (insert, upsert, index), until drop. */
  exists = false;

  constructor(readonly name: string) {}

  async find(filter: Filter = {}, options: FindOptions = {}): Promise<T[]> {
    assertFindWindow(options);
    const deadline = options.maxTimeMS ? performance.now() + options.maxTimeMS : undefined;
    // An index lookup returns candidates out of insertion order, so only a sorted find may use one.
    const sorted = !!options.sort && Object.keys(options.sort).length > 0;
    let rows = await this.scan(filter, deadline, options.maxTimeMS, sorted);
    if (deadline !== undefined && performance.now() > deadline) throw new QueryTimeoutError(this.name, options.maxTimeMS!);
    // `_id` breaks ties, so equal sort keys come back in the same order from every adapter.
    if (options.sort && Object.keys(options.sort).length) rows = sortRows(rows, withIdTieBreaker(options.sort));
    const skip = options.skip ?? 0;
    rows = rows.slice(skip, options.limit ? skip + options.limit : undefined);
    return project<T>(rows, options.projection);
  }

  async findOne(filter: Filter, options: { projection?: Projection; sort?: Sort } = {}): Promise<T | null> {
    return (await this.find(filter, { ...options, limit: 1 }))[0] ?? null;
  }

  async page(filter: Filter, options: PageOptions): Promise<Page<T>> {
    const plan = planPage(filter, options);
    return plan.finish(await this.find(plan.filter, { sort: plan.sort, limit: plan.fetchLimit, projection: plan.projection }));
  }

  async count(filter: Filter = {}): Promise<number> {
    return Object.keys(filter).length ? this.select(filter, Infinity, undefined, 0, true).length : this.docs.size;
  }

  async insertOne(doc: T): Promise<void> {
    if (typeof doc?._id !== 'string') throw new TypeError('document _id must be a string');
    assertNoNestedArrays(doc);
    if (this.docs.has(doc._id)) throw new DuplicateKeyError(this.name, { _id: doc._id });
    this.commit(undefined, deepCopy(doc) as Obj);
  }

  async replaceOne(filter: Filter, doc: T, options: { upsert?: boolean } = {}): Promise<WriteResult> {
    if (Object.keys(doc).some((k) => k.startsWith('$'))) throw new UpdateError('replacement document must not contain update operators');
    assertNoNestedArrays(doc);
    const [target] = this.select(filter, 1);
    // A replacement upsert takes only `_id` from the filter, never its other fields (as MongoDB).
    if (!target) return options.upsert ? this.upsert({ ...deepCopy(doc), _id: doc._id ?? seedFromFilter(filter)._id }) : NOTHING;
    if (doc._id !== undefined && doc._id !== target._id) {
      throw new UpdateError("the replacement would change the immutable field '_id'", 'IMMUTABLE_FIELD');
    }
    const next = { ...deepCopy(doc), _id: target._id } as Obj;
    const same = isEqual(target, next);
    if (!same) this.commit(target, next);
    return { matched: 1, modified: same ? 0 : 1, upserted: false };
  }

  async updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<WriteResult> {
    this.checkUpdate(update);
    const [target] = this.select(filter, 1);
    if (target) return { matched: 1, modified: this.modify(target, update) ? 1 : 0, upserted: false };
    if (!options.upsert) return NOTHING;
    const doc = seedFromFilter(filter);
    applyUpdate(doc, update, true);
    return this.upsert(doc);
  }

  async updateMany(filter: Filter, update: Update): Promise<WriteResult> {
    this.checkUpdate(update);
    const targets = this.select(filter);
    let modified = 0;
    for (const target of targets) if (this.modify(target, update)) modified++;
    return { matched: targets.length, modified, upserted: false };
  }

  async deleteOne(filter: Filter): Promise<number> {
    const [target] = this.select(filter, 1);
    if (target) this.remove(target);
    return target ? 1 : 0;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const targets = this.select(filter);
    targets.forEach((t) => this.remove(t));
    return targets.length;
  }

  async bulkWrite(ops: WriteOp<T>[]): Promise<BulkWriteResult> {
    // Everything the single writes would refuse is refused before anything is written, as MongoDB does.
    for (const op of ops) {
      if ('replaceOne' in op) {
        assertAllowedOperators(op.replaceOne.filter);
        if (Object.keys(op.replaceOne.replacement).some((k) => k.startsWith('$'))) throw new UpdateError('replacement document must not contain update operators');
        assertNoNestedArrays(op.replaceOne.replacement);
      } else if ('updateOne' in op) {
        assertAllowedOperators(op.updateOne.filter);
        this.checkUpdate(op.updateOne.update);
      } else if ('deleteOne' in op) assertAllowedOperators(op.deleteOne.filter);
      else if ('insertOne' in op) {
        if (typeof op.insertOne.document?._id !== 'string') throw new TypeError('document _id must be a string');
        assertNoNestedArrays(op.insertOne.document);
      }
    }
    const result: BulkWriteResult = { matched: 0, modified: 0, upserted: 0, deleted: 0 };
    for (const op of ops) {
      let r: WriteResult;
      if ('replaceOne' in op) r = await this.replaceOne(op.replaceOne.filter, op.replaceOne.replacement, { upsert: op.replaceOne.upsert });
      else if ('updateOne' in op) r = await this.updateOne(op.updateOne.filter, op.updateOne.update, { upsert: op.updateOne.upsert });
      else if ('deleteOne' in op) {
        result.deleted += await this.deleteOne(op.deleteOne.filter);
        continue;
      } else if ('insertOne' in op) {
        await this.insertOne(op.insertOne.document);
        continue;
      } else throw new TypeError(`unknown bulk write operation ${Object.keys(op as object).join(', ')}`);
      result.matched += r.matched;
      result.modified += r.modified;
      if (r.upserted) result.upserted += 1;
    }
    return result;
  }

  async createIndex(spec: IndexSpec): Promise<void> {
    const fields = Object.keys(spec.keys);
    const name = spec.name ?? Object.entries(spec.keys).map(([k, d]) => `${k}_${d}`).join('_');
    const same = [...this.indexes.entries()].find(([n, s]) => n === name || JSON.stringify(s.keys) === JSON.stringify(spec.keys));
    if (same) {
      if (same[0] === name && JSON.stringify(same[1].keys) === JSON.stringify(spec.keys) && !!same[1].unique === !!spec.unique) return;
      throw new Error(`index ${name} conflicts with existing index ${same[0]}`);
    }
    if (spec.unique) this.uniques.push(this.buildUnique(name, fields));
    if (!this.lookups.has(fields[0])) {
      const lookup = new EqualityIndex(fields[0]);
      for (const [id, doc] of this.docs) lookup.update(id, undefined, doc);
      this.lookups.set(fields[0], lookup);
    }
    this.indexes.set(name, { ...spec, name });
    this.exists = true;
  }

  async drop(): Promise<void> {
    this.docs.clear();
    this.indexes.clear();
    this.uniques = [];
    this.lookups.clear();
    this.exists = false;
  }

  // ---------------------------------------------------------------- internals

  /** Stored documents (not copies) matching `filter`, in insertion order, at most `max`; checks
   * `deadline` (performance.now() time) every 256 documents. */
  private select(filter: Filter, max = Infinity, deadline?: number, budget = 0, anyOrder = false): Obj[] {
    const m = compileFilter(filter);
    const ids = m.ids ?? (anyOrder ? this.indexed(filter) : undefined);
    const source = ids ? [...ids].map((id) => this.docs.get(id)).filter((d): d is Obj => !!d) : this.docs.values();
    const out: Obj[] = [];
    let scanned = 0;
    for (const doc of source) {
      if (deadline !== undefined && (++scanned & 255) === 0 && performance.now() > deadline) throw new QueryTimeoutError(this.name, budget);
      if (!matches(m, doc)) continue;
      out.push(doc);
      if (out.length >= max) break;
    }
    return out;
  }

  /**
   * `select` for reads: the scan hands the event loop back every SLICE_MS, so a long search (a
   * large collection, costly patterns on large documents) delays other requests by at most a
   * slice, and its deadline is checked at every document.
   */
  private async scan(filter: Filter, deadline: number | undefined, budget = 0, anyOrder = false): Promise<Obj[]> {
    const m = compileFilter(filter);
    const ids = m.ids ?? (anyOrder ? this.indexed(filter) : undefined);
    const source = ids ? [...ids].map((id) => this.docs.get(id)).filter((d): d is Obj => !!d) : this.docs.values();
    const out: Obj[] = [];
    let slice = performance.now();
    for (const doc of source) {
      const t = performance.now();
      if (deadline !== undefined && t > deadline) throw new QueryTimeoutError(this.name, budget);
      if (t - slice > SLICE_MS) {
        await yieldToLoop();
        slice = performance.now();
        if (deadline !== undefined && slice > deadline) throw new QueryTimeoutError(this.name, budget);
      }
      if (matches(m, doc)) out.push(doc);
    }
    return out;
  }

  /** Candidate ids from an index on a field the filter pins to a scalar at its top level. */
  private indexed(filter: Filter): Iterable<string> | undefined {
    if (!this.lookups.size) return undefined;
    for (const [field, cond] of Object.entries(filter)) {
      const lookup = this.lookups.get(field);
      const key = lookup && equalityOperand(cond);
      if (key !== undefined) return lookup!.candidates(key);
    }
    return undefined;
  }

  private checkUpdate(update: Update): void {
    assertAllowedOperators(update);
    validateUpdate(update);
  }

  /** Updates a copy, so a failed operator or a unique violation leaves the stored doc untouched. */
  private modify(target: Obj, update: Update): boolean {
    const next = deepCopy(target);
    if (!applyUpdate(next, update)) return false;
    this.commit(target, next);
    return true;
  }

  private upsert(doc: Obj): WriteResult {
    const { _id, ...rest } = doc;
    const withId = { _id: _id === undefined ? newId() : _id, ...rest };
    if (typeof withId._id !== 'string') throw new TypeError('document _id must be a string');
    if (this.docs.has(withId._id)) throw new DuplicateKeyError(this.name, { _id: withId._id });
    this.commit(undefined, withId);
    return { matched: 0, modified: 0, upserted: true };
  }

  /** The single place stored state changes: unique checks first, then index maps and docs. */
  private commit(old: Obj | undefined, next: Obj): void {
    const id = next._id as string;
    const keys = this.uniques.map((idx) => idx.keysOf(next));
    for (let i = 0; i < keys.length; i++) {
      const owner = this.uniques[i].ownerOf(keys[i], id);
      if (owner === undefined) continue;
      const { fields } = this.uniques[i];
      throw new DuplicateKeyError(this.name, Object.fromEntries(fields.map((f) => [f, resolve(next, f) ?? null])));
    }
    for (let i = 0; i < keys.length; i++) {
      const owners = this.uniques[i].owners;
      if (old) for (const key of this.uniques[i].keysOf(old)) owners.delete(key);
      for (const key of keys[i]) owners.set(key, id);
    }
    for (const lookup of this.lookups.values()) lookup.update(id, old, next);
    this.docs.set(id, next);
    this.exists = true;
  }

  private remove(doc: Obj): void {
    for (const idx of this.uniques) for (const key of idx.keysOf(doc)) idx.owners.delete(key);
    for (const lookup of this.lookups.values()) lookup.update(doc._id as string, doc, undefined);
    this.docs.delete(doc._id as string);
  }

  private buildUnique(name: string, fields: string[]): UniqueIndex {
    const idx = new UniqueIndex(name, fields);
    for (const doc of this.docs.values()) {
      const keys = idx.keysOf(doc);
      if (idx.ownerOf(keys, doc._id) !== undefined) throw new DuplicateKeyError(this.name, { index: name, _id: doc._id });
      for (const key of keys) idx.owners.set(key, doc._id as string);
    }
    return idx;
  }
}

// ---------------------------------------------------------------- store

class MemoryCheckpoints implements CheckpointStore {
  private positions = new Map<string, number>();
  async get(name: string) { return this.positions.get(name) ?? null; }
  async set(name: string, position: number) { assertPosition(position); this.positions.set(name, position); }
  async delete(name: string) { this.positions.delete(name); }
  async list() {
    // Code-point order, like MongoDB sorting string _ids (localeCompare would not be).
    return [...this.positions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, position]) => ({ name, position }));
  }
}

export class MemoryReadStore implements ReadStore {
  readonly adapter = 'memory';
  readonly checkpoints: CheckpointStore = new MemoryCheckpoints();
  private collections = new Map<string, MemoryCollection<Doc>>();

  collection<T extends Doc = Doc>(name: string): DocumentCollection<T> {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = new MemoryCollection<Doc>(name)));
    return c as unknown as DocumentCollection<T>;
  }

  async listCollections(): Promise<string[]> {
    return [...this.collections.values()].filter((c) => c.exists).map((c) => c.name).sort();
  }

  async health() {
    return { ok: true };
  }

  async close(): Promise<void> {}
}
