/**
 * One collection of an embedded read store, whatever holds its documents (./doc-storage.ts):
 * filters and sorting from ./memory-query.ts (MongoDB semantics from mingo, hot shapes without
 * it), update operators from domain/documents/update-operators.ts, pagination from ./cursor.ts
 * (shared with MongoDB). `_id` equality / `$in` are direct lookups, and a top-level equality on
 * the first field of an index reads that index's candidates. Documents go in and come out as
 * private copies (deepCopy).
 */
import { isEqual } from 'mingo/util';
import type { BulkWriteResult, Doc, DocumentCollection, Filter, FindOptions, IndexSpec, Page, PageOptions, Projection, Sort, Update, WriteOp, WriteResult } from '../../ports/read-store.js';
import { DuplicateKeyError, QueryTimeoutError } from '../../ports/read-store.js';
import { planPage, withIdTieBreaker } from './cursor.js';
import { assertAllowedOperators, assertNoNestedArrays } from '../../domain/documents/store-rules.js';
import { assertFindWindow } from './guards.js';
import { newId } from './new-id.js';
import { equalityOperand } from './memory-index.js';
import { UpdateError, applyUpdate, deepCopy, seedFromFilter, validateUpdate } from '../../domain/documents/update-operators.js';
import { compileFilter, matches, project, sortRows } from './memory-query.js';
import type { DocStorage, Obj } from './doc-storage.js';

/** Longest stretch a read keeps the event loop before letting other work run. */
const SLICE_MS = 10;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const NOTHING: WriteResult = { matched: 0, modified: 0, upserted: false };

export class StoredCollection<T extends Doc> implements DocumentCollection<T> {
  constructor(readonly name: string, private readonly storage: DocStorage) {}

  get exists(): boolean {
    return this.storage.exists;
  }

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
    return Object.keys(filter).length ? this.select(filter, Infinity, undefined, 0, true).length : this.storage.size();
  }

  async insertOne(doc: T): Promise<void> {
    if (typeof doc?._id !== 'string') throw new TypeError('document _id must be a string');
    assertNoNestedArrays(doc);
    if (this.storage.has(doc._id)) throw new DuplicateKeyError(this.name, { _id: doc._id });
    this.storage.put(undefined, deepCopy(doc) as Obj);
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
    if (!same) this.storage.put(target, next);
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
    if (target) this.storage.remove(target);
    return target ? 1 : 0;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const targets = this.select(filter);
    targets.forEach((t) => this.storage.remove(t));
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
    const name = spec.name ?? Object.entries(spec.keys).map(([k, d]) => `${k}_${d}`).join('_');
    const same = this.storage.indexSpecs().find(([n, s]) => n === name || JSON.stringify(s.keys) === JSON.stringify(spec.keys));
    if (same) {
      if (same[0] === name && JSON.stringify(same[1].keys) === JSON.stringify(spec.keys) && !!same[1].unique === !!spec.unique) return;
      throw new Error(`index ${name} conflicts with existing index ${same[0]}`);
    }
    this.storage.addIndex(name, { ...spec, name });
  }

  async drop(): Promise<void> {
    this.storage.clear();
  }

  // ---------------------------------------------------------------- internals

  /** Stored documents (not copies) matching `filter`, in insertion order, at most `max`; checks
   * `deadline` (performance.now() time) every 256 documents. */
  private select(filter: Filter, max = Infinity, deadline?: number, budget = 0, anyOrder = false): Obj[] {
    const m = compileFilter(filter);
    const ids = m.ids ?? (anyOrder ? this.indexed(filter) : undefined);
    const source = ids ? [...ids].map((id) => this.storage.get(id)).filter((d): d is Obj => !!d) : this.storage.values();
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
    const source = ids ? [...ids].map((id) => this.storage.get(id)).filter((d): d is Obj => !!d) : this.storage.values();
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
    for (const [field, cond] of Object.entries(filter)) {
      const key = equalityOperand(cond);
      const ids = key === undefined ? undefined : this.storage.candidates(field, key);
      if (ids) return ids;
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
    this.storage.put(target, next);
    return true;
  }

  private upsert(doc: Obj): WriteResult {
    const { _id, ...rest } = doc;
    const withId = { _id: _id === undefined ? newId() : _id, ...rest };
    if (typeof withId._id !== 'string') throw new TypeError('document _id must be a string');
    if (this.storage.has(withId._id)) throw new DuplicateKeyError(this.name, { _id: withId._id });
    this.storage.put(undefined, withId);
    return { matched: 0, modified: 0, upserted: true };
  }
}
