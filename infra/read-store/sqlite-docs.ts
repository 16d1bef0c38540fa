/**
 * A collection's documents and index entries in SQLite (the embedded default's read models, on
 * disk: memory holds SQLite's page cache, not the data). Documents are stored as V8 serializations
 * (Dates, key order and nulls survive, as with the in-memory copies), in insertion order (`seq`
 * keeps a replaced document's place, like a Map). Unique indexes are rows keyed by their encoded
 * key; the first field of every index has equality rows (`rm_lookup`), as ./memory-index.ts keeps
 * them in Maps. Every write is one SQLite transaction, or a savepoint of the batch transaction
 * it runs in (./sqlite.ts `atomically`).
 */
import { deserialize, serialize } from 'node:v8';
import type Database from 'better-sqlite3';
import type { IndexSpec } from '../../ports/read-store.js';
import { DuplicateKeyError } from '../../ports/read-store.js';
import { EqualityIndex, UniqueIndex, uniqueKeyOf } from './memory-index.js';
import type { DocStorage, Obj } from './doc-storage.js';

/** Rows a scan reads per query: a scan may pause between documents, and better-sqlite3 allows no
 * other statement on the connection while an iterator is open, so it reads in pages. */
const SCAN_PAGE = 256;

export const READ_MODEL_SCHEMA = `
  CREATE TABLE IF NOT EXISTS rm_collections (name TEXT PRIMARY KEY) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS rm_docs (seq INTEGER PRIMARY KEY, coll TEXT NOT NULL, id TEXT NOT NULL, body BLOB NOT NULL);
  CREATE UNIQUE INDEX IF NOT EXISTS rm_docs_id ON rm_docs (coll, id);
  CREATE INDEX IF NOT EXISTS rm_docs_order ON rm_docs (coll, seq);
  CREATE TABLE IF NOT EXISTS rm_indexes (coll TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL, PRIMARY KEY (coll, name));
  CREATE TABLE IF NOT EXISTS rm_lookup (coll TEXT NOT NULL, field TEXT NOT NULL, key TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (coll, field, key, id)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS rm_unique (coll TEXT NOT NULL, name TEXT NOT NULL, key TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (coll, name, key)) WITHOUT ROWID;
`;

function statements(db: Database.Database) {
  return {
    mark: db.prepare('INSERT OR IGNORE INTO rm_collections (name) VALUES (?)'),
    exists: db.prepare<[string], number>('SELECT 1 FROM rm_collections WHERE name = ?').pluck(),
    get: db.prepare<[string, string], Buffer>('SELECT body FROM rm_docs WHERE coll = ? AND id = ?').pluck(),
    has: db.prepare<[string, string], number>('SELECT 1 FROM rm_docs WHERE coll = ? AND id = ?').pluck(),
    page: db.prepare<[string, number, number], { seq: number; body: Buffer }>('SELECT seq, body FROM rm_docs WHERE coll = ? AND seq > ? ORDER BY seq LIMIT ?'),
    count: db.prepare<[string], number>('SELECT count(*) FROM rm_docs WHERE coll = ?').pluck(),
    insert: db.prepare('INSERT INTO rm_docs (coll, id, body) VALUES (?, ?, ?)'),
    update: db.prepare('UPDATE rm_docs SET body = ? WHERE coll = ? AND id = ?'),
    remove: db.prepare('DELETE FROM rm_docs WHERE coll = ? AND id = ?'),
    specs: db.prepare<[string], { name: string; spec: string }>('SELECT name, spec FROM rm_indexes WHERE coll = ? ORDER BY rowid'),
    addSpec: db.prepare('INSERT INTO rm_indexes (coll, name, spec) VALUES (?, ?, ?)'),
    lookup: db.prepare<[string, string, string], string>('SELECT id FROM rm_lookup WHERE coll = ? AND field = ? AND key = ?').pluck(),
    addLookup: db.prepare('INSERT OR IGNORE INTO rm_lookup (coll, field, key, id) VALUES (?, ?, ?, ?)'),
    dropLookup: db.prepare('DELETE FROM rm_lookup WHERE coll = ? AND field = ? AND key = ? AND id = ?'),
    owner: db.prepare<[string, string, string], string>('SELECT id FROM rm_unique WHERE coll = ? AND name = ? AND key = ?').pluck(),
    addOwner: db.prepare('INSERT OR REPLACE INTO rm_unique (coll, name, key, id) VALUES (?, ?, ?, ?)'),
    dropOwner: db.prepare('DELETE FROM rm_unique WHERE coll = ? AND name = ? AND key = ? AND id = ?'),
    transaction: db.transaction((fn: () => void) => fn()),
    clear: ['rm_docs', 'rm_indexes', 'rm_lookup', 'rm_unique', 'rm_collections'].map((t) => db.prepare(`DELETE FROM ${t} WHERE ${t === 'rm_collections' ? 'name' : 'coll'} = ?`)),
  };
}
export type ReadModelStatements = ReturnType<typeof statements>;
export const prepareReadModelStatements = statements;

interface Indexes {
  specs: Array<[string, IndexSpec]>;
  uniques: UniqueIndex[];
  lookups: Map<string, EqualityIndex>;
}

export class SqliteDocs implements DocStorage {
  /** Index definitions, read once from rm_indexes (they change only through addIndex and clear). */
  private cached: Indexes | null = null;

  constructor(
    private readonly name: string,
    private readonly db: Database.Database,
    private readonly sql: ReadModelStatements,
  ) {}

  get exists(): boolean {
    return this.sql.exists.get(this.name) !== undefined;
  }

  get(id: string): Obj | undefined {
    const body = this.sql.get.get(this.name, id);
    return body === undefined ? undefined : (deserialize(body) as Obj);
  }

  has(id: string): boolean {
    return this.sql.has.get(this.name, id) !== undefined;
  }

  *values(): Iterable<Obj> {
    let after = 0;
    for (;;) {
      const rows = this.sql.page.all(this.name, after, SCAN_PAGE);
      for (const row of rows) yield deserialize(row.body) as Obj;
      if (rows.length < SCAN_PAGE) return;
      after = rows[rows.length - 1].seq;
    }
  }

  size(): number {
    return this.sql.count.get(this.name) ?? 0;
  }

  candidates(field: string, key: string): Iterable<string> | undefined {
    return this.indexes().lookups.has(field) ? this.sql.lookup.all(this.name, field, key) : undefined;
  }

  indexSpecs(): Array<[string, IndexSpec]> {
    return this.indexes().specs;
  }

  put(old: Obj | undefined, next: Obj): void {
    const id = next._id as string;
    const { uniques, lookups } = this.indexes();
    const keys = uniques.map((idx) => idx.keysOf(next));
    for (let i = 0; i < keys.length; i++) {
      for (const key of keys[i]) {
        const owner = this.sql.owner.get(this.name, uniques[i].name, key);
        if (owner !== undefined && owner !== id) throw new DuplicateKeyError(this.name, uniqueKeyOf(uniques[i].fields, next));
      }
    }
    this.inTransaction(() => {
      for (let i = 0; i < keys.length; i++) {
        if (old) for (const key of uniques[i].keysOf(old)) this.sql.dropOwner.run(this.name, uniques[i].name, key, id);
        for (const key of keys[i]) this.sql.addOwner.run(this.name, uniques[i].name, key, id);
      }
      for (const lookup of lookups.values()) this.moveLookup(lookup, id, old, next);
      if (old) this.sql.update.run(serialize(next), this.name, id);
      else this.sql.insert.run(this.name, id, serialize(next));
      this.sql.mark.run(this.name);
    });
  }

  remove(doc: Obj): void {
    const id = doc._id as string;
    const { uniques, lookups } = this.indexes();
    this.inTransaction(() => {
      for (const idx of uniques) for (const key of idx.keysOf(doc)) this.sql.dropOwner.run(this.name, idx.name, key, id);
      for (const lookup of lookups.values()) this.moveLookup(lookup, id, doc, undefined);
      this.sql.remove.run(this.name, id);
    });
  }

  addIndex(name: string, spec: IndexSpec): void {
    const fields = Object.keys(spec.keys);
    const { lookups } = this.indexes();
    this.cached = null;
    // One transaction: an index refused over existing duplicates leaves no rows behind.
    this.inTransaction(() => {
      if (spec.unique) {
        const idx = new UniqueIndex(name, fields);
        for (const doc of this.values()) {
          for (const key of idx.keysOf(doc)) {
            const owner = this.sql.owner.get(this.name, name, key);
            if (owner !== undefined && owner !== doc._id) throw new DuplicateKeyError(this.name, { index: name, _id: doc._id });
            this.sql.addOwner.run(this.name, name, key, doc._id);
          }
        }
      }
      if (!lookups.has(fields[0])) {
        const lookup = new EqualityIndex(fields[0]);
        for (const doc of this.values()) this.moveLookup(lookup, doc._id as string, undefined, doc);
      }
      this.sql.addSpec.run(this.name, name, JSON.stringify(spec));
      this.sql.mark.run(this.name);
    });
  }

  clear(): void {
    this.cached = null;
    this.inTransaction(() => {
      for (const stmt of this.sql.clear) stmt.run(this.name);
    });
  }

  /** Forgets the index definitions read so far (a rolled-back batch may have added some). */
  forgetIndexes(): void {
    this.cached = null;
  }

  private moveLookup(lookup: EqualityIndex, id: string, old: Obj | undefined, next: Obj | undefined): void {
    const before = old ? lookup.keysOf(old) : new Set<string>();
    const after = next ? lookup.keysOf(next) : new Set<string>();
    for (const k of before) if (!after.has(k)) this.sql.dropLookup.run(this.name, lookup.field, k, id);
    for (const k of after) if (!before.has(k)) this.sql.addLookup.run(this.name, lookup.field, k, id);
  }

  private indexes(): Indexes {
    if (this.cached) return this.cached;
    const specs = this.sql.specs.all(this.name).map((r): [string, IndexSpec] => [r.name, JSON.parse(r.spec) as IndexSpec]);
    const lookups = new Map<string, EqualityIndex>();
    for (const [, spec] of specs) {
      const first = Object.keys(spec.keys)[0];
      if (!lookups.has(first)) lookups.set(first, new EqualityIndex(first));
    }
    const uniques = specs.filter(([, s]) => s.unique).map(([n, s]) => new UniqueIndex(n, Object.keys(s.keys)));
    return (this.cached = { specs, uniques, lookups });
  }

  /** Inside a batch the batch's transaction already makes the writes one (a failure rolls all of
   * it back); outside, one transaction (better-sqlite3 prepares its BEGIN/COMMIT once). */
  private inTransaction(fn: () => void): void {
    if (this.db.inTransaction) fn();
    else this.sql.transaction(fn);
  }
}
