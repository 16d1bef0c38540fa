/**
 * Keyset ("seek") pagination shared by every ReadStore adapter, so a cursor means the same thing
 * whichever store produced it. A page query is the caller's filter AND "comes after the last item
 * of the previous page in sort order", sorted by the caller's sort plus `_id` as the final
 * tie-breaker, fetching limit+1 rows to learn whether another page exists. Unlike skip/offset, it
 * neither repeats nor drops documents when earlier pages change between requests.
 *
 * Limitation: every sort field should be present, non-null, scalar (not an array) and of one BSON
 * type across the collection. The "after" filter uses `$gt`/`$lt`, which MongoDB brackets by type
 * (`{$gt: 5}` never matches a string, null or a missing field), and equality on null also matches
 * missing fields; with mixed types, nulls or arrays in a sort field, pages can skip documents.
 */
import { createHash } from 'node:crypto';
import type { Filter, Page, PageOptions, Projection, Sort } from '../../ports/read-store.js';
import { InvalidCursorError } from '../../ports/read-store.js';

type Row = Record<string, unknown>;

/** What an adapter runs for one page, and how it turns the rows it got back into a Page. */
export interface PagePlan {
  filter: Filter;
  sort: Sort;
  /** limit + 1: the extra row only tells whether there is a next page. */
  fetchLimit: number;
  projection?: Projection;
  finish<T>(rows: T[]): Page<T>;
}

/** `_id` last: keys after it could never break a tie, so they are dropped. */
export function withIdTieBreaker(sort: Sort = {}): Sort {
  const out: Sort = {};
  for (const [key, dir] of Object.entries(sort)) {
    if (dir !== 1 && dir !== -1) throw new TypeError(`sort direction for ${key} must be 1 or -1`);
    out[key] = dir;
    if (key === '_id') return out;
  }
  out._id = 1;
  return out;
}

export function planPage(filter: Filter, options: PageOptions): PagePlan {
  const { limit } = options;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError('page limit must be a positive integer');
  const sort = withIdTieBreaker(options.sort);
  const keys = Object.keys(sort);
  const print = fingerprint(sort);
  let query = filter;
  if (options.cursor) {
    const after = afterFilter(sort, decodeCursor(options.cursor, print, keys.length));
    query = Object.keys(filter).length ? { $and: [filter, after] } : after;
  }
  const proj = planProjection(options.projection, keys);
  return {
    filter: query,
    sort,
    fetchLimit: limit + 1,
    projection: proj.projection,
    finish<T>(rows: T[]): Page<T> {
      const items = rows.slice(0, limit);
      const last = items[items.length - 1] as Row | undefined;
      const nextCursor = rows.length > limit && last ? encodeCursor(keys.map((k) => getPath(last, k)), print) : null;
      return { items: items.map((row) => proj.strip(row as Row) as T), nextCursor };
    },
  };
}

/** `{$or: [{k0: {$gt: v0}}, {k0: v0, k1: {$gt: v1}}, ...]}`, with `$lt` on descending keys. */
export function afterFilter(sort: Sort, values: unknown[]): Filter {
  const entries = Object.entries(sort);
  const branches = entries.map(([key, dir], i) => {
    const branch: Filter = {};
    for (let j = 0; j < i; j++) branch[entries[j][0]] = { $eq: values[j] };
    branch[key] = { [dir === 1 ? '$gt' : '$lt']: values[i] };
    return branch;
  });
  return branches.length === 1 ? branches[0] : { $or: branches };
}

// ---------------------------------------------------------------- the opaque cursor

/** Binds a cursor to its sort: a cursor from another sort would silently skip or repeat rows. */
function fingerprint(sort: Sort): string {
  return createHash('sha256').update(JSON.stringify(Object.entries(sort))).digest('base64url').slice(0, 12);
}

// JSON has no Date; tag every value so a Date key comes back as a Date (compared as BSON date).
type Tagged = ['d', string] | ['v', unknown];
const tag = (v: unknown): Tagged => (v instanceof Date ? ['d', v.toISOString()] : ['v', v === undefined ? null : v]);

function untag(t: unknown): unknown {
  if (!Array.isArray(t) || t.length !== 2) throw new InvalidCursorError();
  if (t[0] === 'v') return t[1];
  if (t[0] === 'd' && typeof t[1] === 'string' && !Number.isNaN(Date.parse(t[1]))) return new Date(t[1]);
  throw new InvalidCursorError();
}

export function encodeCursor(values: unknown[], print: string): string {
  return Buffer.from(JSON.stringify({ f: print, v: values.map(tag) }), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, print: string, arity: number): unknown[] {
  let body: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  const { f, v } = (body ?? {}) as { f?: unknown; v?: unknown };
  if (f !== print || !Array.isArray(v) || v.length !== arity) throw new InvalidCursorError();
  return v.map(untag);
}

// ---------------------------------------------------------------- projection while paging

/**
 * The cursor is built from the last row's sort-key values, so the fetch must return them even if
 * the caller's projection leaves them out: widen the projection for the fetch, then strip what the
 * caller did not ask for. Assumes sort keys are scalars (never a prefix of a projected path).
 */
function planProjection(projection: Projection | undefined, sortKeys: string[]) {
  const entries = Object.entries(projection ?? {});
  if (!entries.length) return { projection: undefined, strip: (row: Row) => row };
  const inclusive = entries.some(([k, v]) => k !== '_id' && v === 1) || (entries.length === 1 && entries[0][1] === 1);
  const within = (key: string, path: string) => key === path || key.startsWith(`${path}.`);
  const widened: Projection = { ...projection };
  const extra: string[] = [];
  if (inclusive) {
    const included = entries.filter(([, v]) => v === 1).map(([k]) => k);
    if (widened._id !== 0) included.push('_id');
    for (const key of sortKeys) {
      if (included.some((p) => within(key, p))) continue;
      widened[key] = 1;
      extra.push(key);
    }
    const requested = (path: string) => included.some((p) => within(p, path));
    return { projection: widened, strip: (row: Row) => (extra.forEach((k) => deletePath(row, k, requested)), row) };
  }
  for (const [path] of entries) {
    if (!sortKeys.some((key) => within(key, path))) continue;
    delete widened[path];
    extra.push(path);
  }
  const projectionOut = Object.keys(widened).length ? widened : undefined;
  return { projection: projectionOut, strip: (row: Row) => (extra.forEach((k) => deletePath(row, k, () => true)), row) };
}

/** Plain dotted-path read; sort keys are scalars in documents, never reached through arrays. */
export function getPath(row: Row, path: string): unknown {
  let cur: unknown = row;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Row)[seg];
  }
  return cur;
}

/** Removes `path` (also inside arrays of documents, as a projection would) and then any parent
 * object it left empty unless `keep(parentPath)` says the caller asked for something under it. */
function deletePath(row: Row, path: string, keep: (parentPath: string) => boolean, prefix = ''): void {
  const dot = path.indexOf('.');
  if (dot < 0) {
    delete row[path];
    return;
  }
  const head = path.slice(0, dot);
  const child = row[head];
  const childPath = prefix ? `${prefix}.${head}` : head;
  const targets = Array.isArray(child) ? child : [child];
  for (const t of targets) {
    if (t !== null && typeof t === 'object' && !(t instanceof Date)) deletePath(t as Row, path.slice(dot + 1), keep, childPath);
  }
  const empty = child !== null && typeof child === 'object' && !Array.isArray(child) && !(child instanceof Date) && !Object.keys(child).length;
  if (empty && !keep(childPath)) delete row[head];
}
