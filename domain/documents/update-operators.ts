/**
 * MongoDB update operators, pure: the embedded read store applies them to stored documents, and the
 * documents commands apply them to a document read from the log before deciding.
 *
 * Why not mingo's updater (mingo 7.2, already a dependency): it silently ignores what MongoDB
 * refuses (`$inc` of a string, `$push` to a scalar, `$set` of `a.b` under a scalar leave the
 * document unchanged instead of failing), stores `$set: {v: undefined}` as a missing field where
 * the MongoDB driver stores null, refuses `_id` when seeding an upsert from its filter, has no
 * `$setOnInsert`, and rebuilds a query context per call (about 160 µs per document: 16 s for 100k
 * updates). These few operators are simple enough to own, with MongoDB's rules:
 * missing intermediate objects are created, arrays are addressed by numeric segments and padded
 * with null, conflicting paths and `_id` changes are errors, and only real changes count as modified.
 * Positional paths (`$`, `$[]`, `$[id]`) and `arrayFilters` are not supported (FerretDB lacks them too).
 *
 * validateUpdate also refuses what FerretDB v1.24 silently does differently, for both adapters:
 * `$pull` by condition or by (partial) document is ignored there (only exact values work), the
 * `$push` modifiers `$slice`/`$position`/`$sort` are ignored (items are appended), and `$unset` of
 * an array element removes it instead of setting it to null.
 */
import { compare, isEqual } from 'mingo/util';
import { UnsupportedError, assertNoNestedArrays } from './store-rules.js';

type Obj = Record<string, unknown>;
/** The operators both read stores apply (the read-store port's `Update` has the same shape). */
export type Update = Partial<Record<'$set' | '$unset' | '$inc' | '$push' | '$pull' | '$addToSet' | '$setOnInsert' | '$min' | '$max', Record<string, unknown>>>;
type Container = Obj | unknown[];

export class UpdateError extends Error {
  constructor(message: string, readonly code = 'BAD_UPDATE') {
    super(message);
    this.name = 'UpdateError';
  }
}

export const isPlainObject = (v: unknown): v is Obj => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * Deep copy for document values, so stored documents never alias caller objects. About 5x faster
 * than structuredClone on small documents (it serializes); anything exotic still goes through it.
 * `undefined` becomes null, as the MongoDB driver serializes it (so `{a: undefined}` reads back
 * as `{a: null}` from either adapter).
 */
export function deepCopy<T>(v: T): T {
  if (v === undefined) return null as T;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = deepCopy(v[i]);
    return out as T;
  }
  if (v instanceof Date) return new Date(v.getTime()) as T;
  if (!isPlainObject(v)) return structuredClone(v);
  const out: Obj = {};
  for (const key in v) {
    // Assigning an own "__proto__" key (JSON.parse makes them) would set the copy's prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: deepCopy((v as Obj)[key]), enumerable: true, writable: true, configurable: true });
    else out[key] = deepCopy((v as Obj)[key]);
  }
  return out as T;
}
const copy = deepCopy;
const isIndex = (s: string) => /^(0|[1-9]\d*)$/.test(s);

function segments(path: string): string[] {
  const segs = path.split('.');
  for (const s of segs) {
    if (s === '') throw new UpdateError(`invalid field path '${path}'`);
    if (s[0] === '$') throw new UpdateError(`positional or $-prefixed path '${path}' is not supported`);
    if (s === '__proto__') throw new UpdateError(`field name '__proto__' is not allowed`); // would swap a prototype
  }
  return segs;
}

function read(c: Container, key: string): unknown {
  if (Array.isArray(c)) return isIndex(key) ? c[Number(key)] : undefined;
  return Object.prototype.hasOwnProperty.call(c, key) ? c[key] : undefined;
}

function write(c: Container, key: string, value: unknown): void {
  if (!Array.isArray(c)) {
    c[key] = value;
    return;
  }
  if (!isIndex(key)) throw new UpdateError(`cannot create field '${key}' in an array`);
  const i = Number(key);
  while (c.length < i) c.push(null);
  c[i] = value;
}

function isContainer(v: unknown): v is Container {
  return Array.isArray(v) || isPlainObject(v);
}

/** The container of the last segment; creates missing parents when `create`, else null. */
function locate(doc: Obj, path: string, create: boolean): { parent: Container; key: string } | null {
  const segs = segments(path);
  let cur: Container = doc;
  for (let i = 0; i < segs.length - 1; i++) {
    let next = read(cur, segs[i]);
    if (next === undefined) {
      if (!create) return null;
      next = {};
      write(cur, segs[i], next);
    } else if (!isContainer(next)) {
      if (!create) return null;
      throw new UpdateError(`cannot create field '${segs[i + 1]}' in element {${segs[i]}: ${JSON.stringify(next)}}`);
    }
    cur = next as Container;
  }
  return { parent: cur, key: segs[segs.length - 1] };
}

function setPath(doc: Obj, path: string, value: unknown): boolean {
  const { parent, key } = locate(doc, path, true)!;
  const old = read(parent, key);
  if (old !== undefined && isEqual(old, value)) return false;
  write(parent, key, copy(value));
  return true;
}

/** The current array at `path` (created empty if missing); MongoDB refuses non-arrays. */
function arrayAt(doc: Obj, path: string, op: string): unknown[] {
  const { parent, key } = locate(doc, path, true)!;
  const cur = read(parent, key);
  if (cur === undefined) {
    const arr: unknown[] = [];
    write(parent, key, arr);
    return arr;
  }
  if (!Array.isArray(cur)) throw new UpdateError(`cannot apply ${op} to non-array field '${path}'`);
  return cur;
}

function eachOf(arg: unknown): unknown[] {
  if (!isPlainObject(arg) || !('$each' in arg)) return [arg];
  if (!Array.isArray(arg.$each)) throw new UpdateError('$each requires an array');
  return arg.$each;
}

function push(doc: Obj, path: string, arg: unknown): boolean {
  const arr = arrayAt(doc, path, '$push');
  const items = eachOf(arg);
  for (const item of items) arr.push(copy(item));
  return items.length > 0;
}

function addToSet(doc: Obj, path: string, arg: unknown): boolean {
  const arr = arrayAt(doc, path, '$addToSet');
  let changed = false;
  for (const item of eachOf(arg)) {
    if (arr.some((x) => isEqual(x, item))) continue;
    arr.push(copy(item));
    changed = true;
  }
  return changed;
}

/** Only exact values (validateUpdate refuses conditions and documents). */
function pull(doc: Obj, path: string, value: unknown): boolean {
  const at = locate(doc, path, false);
  const cur = at && read(at.parent, at.key);
  if (cur === undefined || cur === null) return false;
  if (!Array.isArray(cur)) throw new UpdateError(`cannot apply $pull to non-array field '${path}'`);
  const kept = cur.filter((el) => !isEqual(el, value));
  if (kept.length === cur.length) return false;
  cur.splice(0, cur.length, ...kept);
  return true;
}

function unset(doc: Obj, path: string): boolean {
  const at = locate(doc, path, false);
  if (!at || read(at.parent, at.key) === undefined) return false;
  if (Array.isArray(at.parent)) at.parent[Number(at.key)] = null; // MongoDB keeps array positions
  else delete at.parent[at.key];
  return true;
}

function inc(doc: Obj, path: string, by: unknown): boolean {
  if (typeof by !== 'number') throw new UpdateError(`$inc of '${path}' needs a number`);
  const { parent, key } = locate(doc, path, true)!;
  const old = read(parent, key);
  if (old !== undefined && typeof old !== 'number') throw new UpdateError(`cannot apply $inc to non-numeric field '${path}'`);
  write(parent, key, (old ?? 0) + by);
  return old === undefined || by !== 0;
}

function minMax(doc: Obj, path: string, value: unknown, sign: 1 | -1): boolean {
  const { parent, key } = locate(doc, path, true)!;
  const old = read(parent, key);
  if (old !== undefined && sign * compare(value, old) <= 0) return false;
  write(parent, key, copy(value));
  return true;
}

type Apply = (doc: Obj, path: string, arg: unknown) => boolean;
const OPERATORS: Record<keyof Update, Apply> = {
  $set: setPath,
  $setOnInsert: setPath,
  $unset: (doc, path) => unset(doc, path),
  $inc: inc,
  $min: (doc, path, v) => minMax(doc, path, v, -1),
  $max: (doc, path, v) => minMax(doc, path, v, 1),
  $push: push,
  $addToSet: addToSet,
  $pull: pull,
};

/** Same errors MongoDB gives (unknown operators, empty updates, two operators on one path),
 * plus UnsupportedError for what FerretDB would silently get wrong (see the header). */
export function validateUpdate(update: Update): void {
  const ops = isPlainObject(update) ? Object.entries(update) : [];
  if (!ops.length) throw new UpdateError('update document must contain update operators');
  const paths: string[] = [];
  for (const [op, fields] of ops) {
    if (!(op in OPERATORS)) throw new UpdateError(`unknown update operator ${op}`);
    if (!isPlainObject(fields)) throw new UpdateError(`${op} needs a document of fields`);
    for (const [path, arg] of Object.entries(fields)) {
      assertPortable(op, path, arg);
      paths.push(path);
    }
  }
  for (let i = 0; i < paths.length; i++) {
    for (let j = i + 1; j < paths.length; j++) {
      const [a, b] = [paths[i], paths[j]];
      if (a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`)) throw new UpdateError(`updating '${a}' and '${b}' would conflict`);
    }
  }
}

function assertPortable(op: string, path: string, arg: unknown): void {
  if (op === '$pull' && (isPlainObject(arg) || Array.isArray(arg) || arg instanceof RegExp)) {
    throw new UnsupportedError(`$pull on '${path}' supports exact scalar values only (FerretDB ignores conditions and regexes); $set the filtered array instead`);
  }
  if (op === '$push' && isPlainObject(arg) && '$each' in arg && Object.keys(arg).length > 1) {
    throw new UnsupportedError(`$push on '${path}' supports $each only, not $slice/$position/$sort (FerretDB ignores them)`);
  }
  if (op === '$unset' && path.split('.').some((s) => /^\d+$/.test(s))) {
    throw new UnsupportedError(`$unset of array element '${path}' is not supported (FerretDB removes it instead of nulling it)`);
  }
  const items = op === '$push' || op === '$addToSet' ? eachOf(arg) : [arg];
  for (const item of items) assertNoNestedArrays(item, op === '$push' || op === '$addToSet');
}

/**
 * Applies `update` to `doc` in place (pass a copy if the original must survive an error) and says
 * whether anything changed. `$setOnInsert` applies only when `inserting` (an upsert's new doc).
 * Call validateUpdate first (once per operation, not per document: updateMany reuses it).
 */
export function applyUpdate(doc: Obj, update: Update, inserting = false): boolean {
  const id = doc._id;
  let changed = false;
  for (const [op, fields] of Object.entries(update) as Array<[keyof Update, Obj]>) {
    if (op === '$setOnInsert' && !inserting) continue;
    for (const [path, arg] of Object.entries(fields)) changed = OPERATORS[op](doc, path, arg) || changed;
  }
  if (id !== undefined && !isEqual(doc._id, id)) {
    throw new UpdateError("performing an update on the path '_id' would modify the immutable field '_id'", 'IMMUTABLE_FIELD');
  }
  return changed;
}

/** Like MongoDB, an upsert's new document starts from the filter's equality conditions
 * (top level, `$eq`, and inside `$and`); ranges, regexes and other operators contribute nothing. */
export function seedFromFilter(filter: Record<string, unknown>): Obj {
  const fields: Obj = {};
  const visit = (f: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(f)) {
      if (key === '$and' && Array.isArray(value)) value.forEach((c) => isPlainObject(c) && visit(c));
      if (key.startsWith('$') || value instanceof RegExp) continue;
      const ops = isPlainObject(value) ? Object.keys(value) : [];
      if (!ops.some((k) => k.startsWith('$'))) fields[key] = value;
      else if (ops.length === 1 && ops[0] === '$eq') fields[key] = (value as Obj).$eq;
    }
  };
  visit(filter);
  const doc: Obj = {};
  if (!Object.keys(fields).length) return doc;
  validateUpdate({ $set: fields });
  applyUpdate(doc, { $set: fields });
  return doc;
}
