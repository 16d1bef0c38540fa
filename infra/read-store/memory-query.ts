/**
 * The embedded read store's queries: filters compiled once (hot shapes skip mingo: `_id` pins,
 * flat scalar equality, comparisons with scalars), sorting and projection with MongoDB's
 * semantics from mingo (scripting off).
 */
import { Query } from 'mingo';
import { compare, resolve } from 'mingo/util';
import type { Filter, Projection, Sort } from '../../ports/read-store.js';
import { assertAllowedOperators } from '../../domain/documents/store-rules.js';
import { withRe2RegExp } from '../../domain/documents/regex.js';
import { deepCopy, isPlainObject } from '../../domain/documents/update-operators.js';

type Obj = Record<string, unknown>;
const MINGO = { scriptEnabled: false };

/** A compiled filter. A plain object, not closures: under tsx every closure created on a hot path
 * also pays for esbuild's keepNames helper. */
interface Matcher {
  /** Candidate ids when the filter pins `_id`; otherwise every document is a candidate. */
  ids?: string[];
  /** Set when the filter is flat scalar equality, which needs no mingo. */
  scalarKeys?: string[];
  filter: Filter;
  query?: Query;
  /** Set when every condition is a scalar equality or a comparison with a scalar operand. */
  comparisons?: Array<[string, string, string | number | boolean]>;
}

const COMPARISONS = new Set(['$eq', '$ne', '$lt', '$lte', '$gt', '$gte']);

/** Flat fields compared with scalars: the projectors' version guards (`{_id, version: {$lt: n}}`). */
function compileComparisons(filter: Filter): Matcher['comparisons'] {
  const out: NonNullable<Matcher['comparisons']> = [];
  for (const [key, cond] of Object.entries(filter)) {
    if (key.startsWith('$') || key.includes('.')) return undefined;
    if (isScalar(cond)) {
      out.push([key, '$eq', cond as string | number | boolean]);
      continue;
    }
    if (!isPlainObject(cond)) return undefined;
    for (const [op, operand] of Object.entries(cond)) {
      if (!COMPARISONS.has(op) || !isScalar(operand)) return undefined;
      out.push([key, op, operand as string | number | boolean]);
    }
  }
  return out;
}

/** true/false when decided here; undefined when the document's value needs mingo's full semantics
 * (arrays, missing fields, type brackets). */
function testComparisons(conds: NonNullable<Matcher['comparisons']>, doc: Obj): boolean | undefined {
  for (let i = 0; i < conds.length; i++) {
    const [key, op, want] = conds[i];
    const v = doc[key];
    if (typeof v !== typeof want) return undefined;
    const ok =
      op === '$eq' ? v === want
      : op === '$ne' ? v !== want
      : op === '$lt' ? (v as number) < (want as number)
      : op === '$lte' ? (v as number) <= (want as number)
      : op === '$gt' ? (v as number) > (want as number)
      : (v as number) >= (want as number);
    if (!ok) return false;
  }
  return true;
}

const isScalar = (v: unknown) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && !Number.isNaN(v));

function idCandidates(v: unknown): string[] | undefined {
  if (typeof v === 'string') return [v];
  if (!isPlainObject(v) || Object.keys(v).length !== 1) return undefined;
  if (typeof v.$eq === 'string') return [v.$eq];
  const list = v.$in;
  return Array.isArray(list) && list.every((x) => typeof x === 'string') ? [...new Set(list as string[])] : undefined;
}

export function compileFilter(filter: Filter): Matcher {
  assertAllowedOperators(filter);
  const keys = Object.keys(filter);
  const ids = idCandidates(filter._id);
  if (keys.every((k) => !k.startsWith('$') && !k.includes('.') && isScalar(filter[k]))) return { ids, scalarKeys: keys, filter };
  // Building a mingo Query is the expensive part (it copies its operator registry); defer it until
  // a document needs it.
  return { ids, filter, comparisons: compileComparisons(filter) };
}

/** {field: scalar} matches an equal value or an array containing it. */
export function matches(m: Matcher, doc: Obj): boolean {
  if (m.comparisons) {
    const decided = testComparisons(m.comparisons, doc);
    if (decided !== undefined) return decided;
  }
  if (!m.scalarKeys) {
    // Built with the global RegExp standing for Re2RegExp: mingo turns `$regex` strings into
    // RegExps while compiling, and those then match with RE2 (linear time), never by backtracking.
    m.query ??= withRe2RegExp(() => new Query(m.filter, MINGO));
    return m.query.test(doc);
  }
  const keys = m.scalarKeys!;
  for (let i = 0; i < keys.length; i++) {
    const v = doc[keys[i]];
    const want = m.filter[keys[i]];
    if (v !== want && !(Array.isArray(v) && v.includes(want))) return false;
  }
  return true;
}

/** MongoDB sorts an array by its smallest element ascending and its largest descending, an empty
 * array below null, and missing equal to null (mingo alone uses the array itself and puts missing
 * first). mingo's compare ranks undefined below null, which gives the empty array its place. */
function sortValue(doc: Obj, path: string, dir: 1 | -1): unknown {
  const v = path.includes('.') ? resolve(doc, path) : doc[path];
  if (!Array.isArray(v)) return v ?? null;
  if (!v.length) return undefined;
  return v.reduce((best, x) => (dir * compare(x, best) < 0 ? x : best));
}

export function sortRows<T extends Obj>(rows: T[], sort: Sort): T[] {
  const keys = Object.entries(sort);
  const decorated = rows.map((row) => ({ row, vals: keys.map(([k, d]) => sortValue(row, k, d)) }));
  decorated.sort((a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const c = compare(a.vals[i], b.vals[i]);
      if (c) return c * keys[i][1];
    }
    return 0;
  });
  return decorated.map((d) => d.row);
}

export function project<T>(rows: Obj[], projection?: Projection): T[] {
  if (!projection || !Object.keys(projection).length) return rows.map((r) => deepCopy(r) as T);
  assertAllowedOperators(projection);
  return new Query({}, MINGO).find(rows, projection).all().map((r) => deepCopy(r) as T);
}

