/**
 * Indexes of the embedded read store (./memory.ts): UniqueIndex enforces unique indexes;
 * EqualityIndex serves lookups for the first field of every index.
 *
 * Equality lookups: an index on one field maps each value
 * the field holds to the ids of the documents holding it, so `{field: scalar}` reads a handful of
 * candidates instead of scanning (and running mingo on) the whole collection. Like a MongoDB
 * multikey index, a value inside an array (also through arrays of documents, for dotted paths) is
 * a key of its own. Candidates are still tested with the full filter: the index only has to be a
 * superset of the matches, never exact.
 */
import { resolve } from 'mingo/util';

type Obj = Record<string, unknown>;

/** Scalars only: equality on null also matches missing fields, which an index of values cannot answer. */
export function equalityKey(v: unknown): string | undefined {
  if (typeof v === 'string') return `s${v}`;
  if (typeof v === 'number' && !Number.isNaN(v)) return `d${Object.is(v, -0) ? 0 : v}`;
  if (typeof v === 'boolean') return `b${v}`;
  return undefined;
}

/** Every scalar reachable at `path`, stepping into arrays (elements and their documents' fields). */
function valuesAt(doc: Obj, segments: string[]): unknown[] {
  let current: unknown[] = [doc];
  for (const seg of segments) {
    const next: unknown[] = [];
    for (const c of current) {
      if (Array.isArray(c)) {
        if (/^\d+$/.test(seg)) next.push(c[Number(seg)]);
        for (const e of c) if (e !== null && typeof e === 'object' && !Array.isArray(e)) next.push((e as Obj)[seg]);
      } else if (c !== null && typeof c === 'object') next.push((c as Obj)[seg]);
    }
    current = next;
  }
  return current.flatMap((v) => (Array.isArray(v) ? [v, ...v] : [v]));
}

export class EqualityIndex {
  private readonly byKey = new Map<string, Set<string>>();
  private readonly segments: string[];

  constructor(readonly field: string) {
    this.segments = field.split('.');
  }

  keysOf(doc: Obj): Set<string> {
    const keys = new Set<string>();
    for (const v of valuesAt(doc, this.segments)) {
      const k = equalityKey(v);
      if (k !== undefined) keys.add(k);
    }
    return keys;
  }

  /** Moves `id` from the keys of `old` to those of `next` (either may be absent). */
  update(id: string, old: Obj | undefined, next: Obj | undefined): void {
    const before = old ? this.keysOf(old) : new Set<string>();
    const after = next ? this.keysOf(next) : new Set<string>();
    for (const k of before) {
      if (after.has(k)) continue;
      const ids = this.byKey.get(k);
      ids?.delete(id);
      if (ids && !ids.size) this.byKey.delete(k);
    }
    for (const k of after) {
      if (before.has(k)) continue;
      let ids = this.byKey.get(k);
      if (!ids) this.byKey.set(k, (ids = new Set()));
      ids.add(id);
    }
  }

  candidates(key: string): Iterable<string> {
    return this.byKey.get(key) ?? [];
  }

  clear(): void {
    this.byKey.clear();
  }
}

/** The equality operand of a top-level condition (`{f: x}` or `{f: {$eq: x}}`), as an index key. */
export function equalityOperand(cond: unknown): string | undefined {
  if (cond !== null && typeof cond === 'object' && !Array.isArray(cond)) {
    const keys = Object.keys(cond);
    return keys.length === 1 && keys[0] === '$eq' ? equalityKey((cond as Obj).$eq) : undefined;
  }
  return equalityKey(cond);
}

// ---------------------------------------------------------------- unique indexes

/** Stable text for a BSON-ish value: 1 and 1.0 agree (JS has one number type), a Date is not its ISO string. */
function encode(v: unknown): string {
  if (v === undefined || v === null) return 'n';
  if (v instanceof Date) return `t${v.getTime()}`;
  if (Array.isArray(v)) return `[${v.map(encode).join(',')}]`;
  if (typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${encode(x)}`).join(',')}}`;
  if (typeof v === 'number') return `d${Object.is(v, -0) ? 0 : v}`;
  return `${(typeof v)[0]}${JSON.stringify(v)}`;
}

export class UniqueIndex {
  /** encoded key -> owning _id */
  readonly owners = new Map<string, string>();
  constructor(readonly name: string, readonly fields: string[]) {}

  /** Like MongoDB: missing is null, and an array is indexed by each of its elements (multikey).
   * FerretDB v1.24 differs on both (several missing/null values pass; an array is one whole value),
   * so keep unique-indexed fields present, non-null and scalar. */
  keysOf(doc: Obj): string[] {
    if (this.fields.length === 1) return this.partsOf(doc, this.fields[0]);
    let combos: string[] = [''];
    for (const field of this.fields) {
      const parts = this.partsOf(doc, field);
      combos = combos.flatMap((c) => parts.map((p) => `${c}|${p}`));
    }
    return combos;
  }

  /** The `_id` of a document other than `self` holding one of `keys`, if any. */
  ownerOf(keys: string[], self: unknown): string | undefined {
    for (const key of keys) {
      const owner = this.owners.get(key);
      if (owner !== undefined && owner !== self) return owner;
    }
    return undefined;
  }

  private partsOf(doc: Obj, field: string): string[] {
    const v = field.includes('.') ? resolve(doc, field) : doc[field];
    if (!Array.isArray(v)) return [encode(v)];
    return v.length ? [...new Set(v.map(encode))] : ['[]'];
  }
}

/** What a DuplicateKeyError names for a unique index's fields of `doc`. */
export function uniqueKeyOf(fields: string[], doc: Obj): Obj {
  return Object.fromEntries(fields.map((f) => [f, resolve(doc, f) ?? null]));
}
