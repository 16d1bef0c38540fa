/**
 * Where an embedded collection keeps its documents and index entries: in Maps (./memory.ts) or
 * in SQLite (./sqlite-docs.ts). Query and update semantics live once, in ./stored-collection.ts;
 * a storage only stores, looks up and enforces unique keys.
 */
import type { IndexSpec } from '../../ports/read-store.js';

export type Obj = Record<string, unknown>;

export interface DocStorage {
  /** MongoDB lists a collection once something created it (insert, upsert, index), until drop. */
  readonly exists: boolean;
  /** The stored document (callers never mutate it; a write goes through `put`). */
  get(id: string): Obj | undefined;
  has(id: string): boolean;
  /** Every document in insertion order; a replaced document keeps its place. Safe to pause between
   * items (a scan yields to the event loop) while other writes happen. */
  values(): Iterable<Obj>;
  size(): number;
  /** Ids of documents holding `key` (./memory-index.ts `equalityKey`) at `field`, when an index
   * leads with `field`; undefined when none does. A superset of the matches is fine. */
  candidates(field: string, key: string): Iterable<string> | undefined;
  /** Stores `next` in place of `old` (absent for an insert), after checking unique indexes:
   * DuplicateKeyError leaves everything as it was. */
  put(old: Obj | undefined, next: Obj): void;
  remove(doc: Obj): void;
  indexSpecs(): Array<[string, IndexSpec]>;
  /** Builds a new index over the stored documents; DuplicateKeyError over existing duplicates. */
  addIndex(name: string, spec: IndexSpec): void;
  /** Removes every document and index. */
  clear(): void;
}
