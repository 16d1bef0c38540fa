/**
 * Embedded read store in memory: documents in Maps (MemoryDocs), with the query and update
 * semantics every embedded store shares (./stored-collection.ts). `_id` lookups and unique
 * indexes are Maps; stored documents are private copies. The store of tests, and of
 * `READ_MODELS=memory`; the service's default keeps its read models in SQLite (./sqlite.ts).
 */
import type { CheckpointStore, Doc, DocumentCollection, IndexSpec, ReadStore } from '../../ports/read-store.js';
import { DuplicateKeyError } from '../../ports/read-store.js';
import { assertPosition } from './guards.js';
import { EqualityIndex, UniqueIndex, uniqueKeyOf } from './memory-index.js';
import type { DocStorage, Obj } from './doc-storage.js';
import { StoredCollection } from './stored-collection.js';

// ---------------------------------------------------------------- collection

/** Documents and index entries in Maps: the store of tests and of `READ_MODELS=memory`. */
class MemoryDocs implements DocStorage {
  private docs = new Map<string, Obj>();
  private indexes = new Map<string, IndexSpec>();
  private uniques: UniqueIndex[] = [];
  /** Lookups by value for the first field of every index (see ./memory-index.ts). */
  private lookups = new Map<string, EqualityIndex>();
  exists = false;

  constructor(private readonly name: string) {}

  get(id: string) { return this.docs.get(id); }
  has(id: string) { return this.docs.has(id); }
  values() { return this.docs.values(); }
  size() { return this.docs.size; }
  candidates(field: string, key: string) { return this.lookups.get(field)?.candidates(key); }
  indexSpecs() { return [...this.indexes.entries()]; }

  addIndex(name: string, spec: IndexSpec): void {
    const fields = Object.keys(spec.keys);
    if (spec.unique) this.uniques.push(this.buildUnique(name, fields));
    if (!this.lookups.has(fields[0])) {
      const lookup = new EqualityIndex(fields[0]);
      for (const [id, doc] of this.docs) lookup.update(id, undefined, doc);
      this.lookups.set(fields[0], lookup);
    }
    this.indexes.set(name, spec);
    this.exists = true;
  }

  clear(): void {
    this.docs.clear();
    this.indexes.clear();
    this.uniques = [];
    this.lookups.clear();
    this.exists = false;
  }

  /** The single place stored state changes: unique checks first, then index maps and docs. */
  put(old: Obj | undefined, next: Obj): void {
    const id = next._id as string;
    const keys = this.uniques.map((idx) => idx.keysOf(next));
    for (let i = 0; i < keys.length; i++) {
      if (this.uniques[i].ownerOf(keys[i], id) === undefined) continue;
      throw new DuplicateKeyError(this.name, uniqueKeyOf(this.uniques[i].fields, next));
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

  remove(doc: Obj): void {
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
  private collections = new Map<string, StoredCollection<Doc>>();

  collection<T extends Doc = Doc>(name: string): DocumentCollection<T> {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = new StoredCollection<Doc>(name, new MemoryDocs(name))));
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
