/**
 * A persistent (immutable, structurally shared) string-keyed map for decision states that grow
 * large: a collection's set of live document ids. `evolve` must never mutate its input, and
 * copying a 100,000-entry Map per event would make folding a collection quadratic. This is a fixed
 * three-level, 32-way trie over a string hash: a `set` copies three 32-slot arrays and one small
 * bucket (about 100 pointers), whatever the size; 100,000 keys leave about three per bucket.
 */
type Bucket<V> = ReadonlyArray<readonly [string, V]>;
type Level1<V> = ReadonlyArray<Bucket<V> | undefined>;
type Level2<V> = ReadonlyArray<Level1<V> | undefined>;
type Root<V> = ReadonlyArray<Level2<V> | undefined>;

const WIDTH = 32;
const EMPTY: ReadonlyArray<undefined> = Object.freeze(new Array(WIDTH).fill(undefined));

/** FNV-1a, 32 bits: fast and spreads short ids well enough for bucketing. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const replaced = <T>(arr: ReadonlyArray<T>, i: number, v: T): ReadonlyArray<T> => {
  const copy = arr.slice();
  copy[i] = v;
  return copy;
};

export class PersistentMap<V> {
  static empty<V>(): PersistentMap<V> {
    return new PersistentMap<V>(EMPTY as Root<V>, 0);
  }

  private constructor(private readonly root: Root<V>, readonly size: number) {}

  get(key: string): V | undefined {
    const h = hash(key);
    const bucket = this.root[h & 31]?.[(h >>> 5) & 31]?.[(h >>> 10) & 31];
    if (!bucket) return undefined;
    for (const [k, v] of bucket) if (k === key) return v;
    return undefined;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Every entry, in no particular order. */
  *entries(): IterableIterator<readonly [string, V]> {
    for (const l2 of this.root) for (const l1 of l2 ?? []) for (const bucket of l1 ?? []) if (bucket) yield* bucket;
  }

  /** A new map with `key` set to `value` (undefined values are not allowed: use delete). */
  set(key: string, value: V): PersistentMap<V> {
    return this.update(key, value);
  }

  delete(key: string): PersistentMap<V> {
    return this.has(key) ? this.update(key, undefined) : this;
  }

  private update(key: string, value: V | undefined): PersistentMap<V> {
    const h = hash(key);
    const [a, b, c] = [h & 31, (h >>> 5) & 31, (h >>> 10) & 31];
    const l2 = this.root[a] ?? (EMPTY as Level2<V>);
    const l1 = l2[b] ?? (EMPTY as Level1<V>);
    const bucket = l1[c] ?? [];
    const at = bucket.findIndex(([k]) => k === key);
    let next: Bucket<V>;
    if (value === undefined) next = bucket.filter((_, i) => i !== at);
    else next = at < 0 ? [...bucket, [key, value] as const] : replaced(bucket, at, [key, value] as const);
    const size = this.size + (value === undefined ? -1 : at < 0 ? 1 : 0);
    return new PersistentMap<V>(replaced(this.root, a, replaced(l2, b, replaced(l1, c, next.length ? next : undefined))), size);
  }
}
