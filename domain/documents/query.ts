import { DomainError } from '../shared/decider.js';
import { REGEX_OPTIONS, UserRegexError, compileUserRegex, type UserRegex } from './regex.js';

/**
 * Searches: the caller's MongoDB-style filter, sort and projection are checked against the subset
 * both read stores answer identically (the embedded one through mingo, MongoDB and FerretDB v1.24
 * natively) and rewritten onto the stored shape `{_id: <documentId>, r: <revision>, d: <document>}`:
 * every field path moves under `d.` except `_id`. Nothing the caller writes can name a stored
 * field outside `d` (a field `c` becomes `d.c`), and each user collection is its own physical
 * collection, so no filter can reach another collection's documents.
 */
export interface QueryLimits {
  /** Nesting of $and/$or/$nor/$not/$elemMatch. */
  maxDepth: number;
  /** Keys in the whole filter. */
  maxNodes: number;
  /** Elements of one $in/$nin/$all list. */
  maxList: number;
  maxRegexLength: number;
}

type Obj = Record<string, unknown>;
type Scalar = string | number | boolean | null;

/** Operators that would run code in the store (or in mingo) are refused wherever they appear. */
export const FORBIDDEN_OPERATORS = ['$where', '$function', '$accumulator', '$expr'];
const LOGICAL = new Set(['$and', '$or', '$nor']);
/** `$type` names both stores agree on (`number` covers int, long and double). */
export const TYPE_NAMES = ['string', 'number', 'bool', 'object', 'array', 'null'];

const fail = (code: string, at: string, message: string) => new DomainError(code, `${at}: ${message}`, 'invalid', { path: at });
const isPlain = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
const isScalar = (v: unknown): v is Scalar => v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

class Walk {
  nodes = 0;
  constructor(readonly limits: QueryLimits) {}

  count(at: string): void {
    if (++this.nodes > this.limits.maxNodes) throw fail('FILTER_TOO_COMPLEX', at, `a filter holds at most ${this.limits.maxNodes} conditions`);
  }

  deeper(depth: number, at: string): number {
    if (depth + 1 > this.limits.maxDepth) throw fail('FILTER_TOO_COMPLEX', at, `operators nest at most ${this.limits.maxDepth} levels deep`);
    return depth + 1;
  }
}

function operatorGuard(key: string, at: string): void {
  if (FORBIDDEN_OPERATORS.includes(key)) throw new DomainError('FORBIDDEN_OPERATOR', `${at}: operator ${key} is not allowed`, 'invalid', { path: at, operator: key });
}

/** A user field path onto the stored shape: `_id` stays, everything else moves under `d.`. */
export function storedPath(path: string, at: string): string {
  if (!path.length || path.length > 512) throw fail('INVALID_FILTER', at, 'field paths are 1-512 characters');
  for (const seg of path.split('.')) {
    if (!seg.length) throw fail('INVALID_FILTER', at, `empty segment in field path "${path}"`);
    if (seg.startsWith('$')) throw fail('INVALID_FILTER', at, `field path segments must not start with "$" ("${path}")`);
    if (seg.includes('\u0000')) throw fail('INVALID_FILTER', at, 'field paths must not contain NUL');
  }
  if (path === '_id') return '_id';
  if (path.startsWith('_id.')) throw fail('INVALID_FILTER', at, '_id is a string and has no fields');
  return `d.${path}`;
}

/** Checks and rewrites a filter; throws 400 with `details.path` naming the offending place. */
export function translateFilter(filter: unknown, limits: QueryLimits, at = 'body.filter'): Obj {
  if (filter === undefined || filter === null) return {};
  if (!isPlain(filter)) throw fail('INVALID_FILTER', at, 'must be an object');
  return translateDocument(filter, new Walk(limits), 0, at);
}

function translateDocument(filter: Obj, walk: Walk, depth: number, at: string): Obj {
  const out: Obj = {};
  for (const [key, value] of Object.entries(filter)) {
    const here = `${at}.${key}`;
    walk.count(here);
    if (key.startsWith('$')) {
      operatorGuard(key, here);
      if (!LOGICAL.has(key)) throw fail('UNSUPPORTED_OPERATOR', here, `${key} is not supported at the top of a filter (use $and, $or, $nor or field conditions)`);
      if (!Array.isArray(value) || !value.length) throw fail('INVALID_FILTER', here, `${key} takes a non-empty array of filters`);
      const next = walk.deeper(depth, here);
      const subs = value.map((sub, i) => {
        if (!isPlain(sub)) throw fail('INVALID_FILTER', `${here}.${i}`, 'must be an object');
        return translateDocument(sub, walk, next, `${here}.${i}`);
      });
      // `$and` may already hold rewritten `$all` conditions of this level.
      out[key] = key === '$and' ? [...((out.$and as Obj[] | undefined) ?? []), ...subs] : subs;
      continue;
    }
    const path = storedPath(key, here);
    const cond = translateCondition(value, walk, depth, here);
    // `{$all: [a, b]}` is `{$and: [{f: a}, {f: b}]}` in MongoDB (so it matches a scalar `a` too);
    // mingo matches arrays only, so it is rewritten into that form for every store.
    if (isPlain(cond) && Array.isArray(cond.$all)) {
      const { $all, ...rest } = cond;
      const and = ($all as Scalar[]).map((v) => ({ [path]: v }));
      if (Object.keys(rest).length) and.push({ [path]: rest as never });
      out.$and = [...((out.$and as Obj[] | undefined) ?? []), ...and];
      continue;
    }
    out[path] = cond;
  }
  return out;
}

function translateCondition(value: unknown, walk: Walk, depth: number, at: string): unknown {
  if (isScalar(value)) return value;
  if (Array.isArray(value)) return scalarList(value, walk, at, 'an exact array match takes scalar elements');
  if (!isPlain(value)) throw fail('INVALID_FILTER', at, 'unsupported value');
  const keys = Object.keys(value);
  if (!keys.length || keys.some((k) => !k.startsWith('$'))) {
    for (const k of keys) if (k.startsWith('$')) operatorGuard(k, `${at}.${k}`);
    throw fail('UNSUPPORTED_OPERATOR', at, 'matching a whole embedded document is not supported (its key order matters in MongoDB); use dotted paths such as "address.city"');
  }
  return operators(value, walk, depth, at, false);
}

/** `{$gt: 1, $lt: 5}`; inside `$elemMatch` the same operators apply to scalar elements. */
function operators(expr: Obj, walk: Walk, depth: number, at: string, inElemMatch: boolean): Obj {
  const out: Obj = {};
  for (const [op, arg] of Object.entries(expr)) {
    const here = `${at}.${op}`;
    walk.count(here);
    operatorGuard(op, here);
    switch (op) {
      case '$eq':
      case '$ne':
        if (!isScalar(arg)) throw fail('INVALID_FILTER', here, `${op} takes a string, number, boolean or null`);
        out[op] = arg;
        break;
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        if (typeof arg !== 'string' && !(typeof arg === 'number' && Number.isFinite(arg))) throw fail('INVALID_FILTER', here, `${op} takes a string or a number`);
        out[op] = arg;
        break;
      case '$in':
      case '$nin':
        out[op] = scalarList(arg, walk, here, `${op} takes an array of strings, numbers, booleans or null`);
        break;
      case '$all':
        if (inElemMatch || at.includes('.$not')) throw fail('UNSUPPORTED_OPERATOR', here, '$all is not supported inside $elemMatch or $not');
        out[op] = scalarList(arg, walk, here, '$all takes a non-empty array of strings, numbers, booleans or null', true);
        break;
      case '$exists':
        if (typeof arg !== 'boolean') throw fail('INVALID_FILTER', here, '$exists takes true or false');
        out[op] = arg;
        break;
      case '$type': {
        const names = Array.isArray(arg) ? arg : [arg];
        if (!names.length || names.some((n) => typeof n !== 'string' || !TYPE_NAMES.includes(n))) {
          throw fail('INVALID_FILTER', here, `$type takes one of ${TYPE_NAMES.join(', ')} (or an array of them)`);
        }
        out[op] = arg;
        break;
      }
      case '$size':
        if (inElemMatch) throw fail('UNSUPPORTED_OPERATOR', here, '$size is not supported inside $elemMatch');
        if (!Number.isInteger(arg) || (arg as number) < 0) throw fail('INVALID_FILTER', here, '$size takes a non-negative integer');
        out[op] = arg;
        break;
      case '$regex': {
        const regex = checkRegex(arg, expr.$options, walk.limits, here);
        out[op] = regex.pattern;
        if (regex.options) out.$options = regex.options;
        break;
      }
      case '$options':
        if (expr.$regex === undefined) throw fail('INVALID_FILTER', here, '$options goes with $regex');
        break;
      case '$not':
        if (!isPlain(arg) || !Object.keys(arg).length || Object.keys(arg).some((k) => !k.startsWith('$'))) {
          throw fail('INVALID_FILTER', here, '$not takes an operator expression such as {"$gt": 5}');
        }
        out[op] = operators(arg, walk, walk.deeper(depth, here), here, inElemMatch);
        break;
      case '$elemMatch':
        if (inElemMatch) throw fail('UNSUPPORTED_OPERATOR', here, '$elemMatch does not nest');
        // FerretDB v1.24 answers field conditions and logical operators inside $elemMatch wrongly or
        // not at all, and with two operators ({$gte: 80, $lt: 90}) it does not require one element
        // to satisfy both: only one operator on scalar elements means the same on every store.
        if (!isPlain(arg) || Object.keys(arg).length !== 1 || Object.keys(arg).some((k) => !k.startsWith('$') || LOGICAL.has(k) || k === '$not')) {
          throw fail('UNSUPPORTED_OPERATOR', here, '$elemMatch takes one operator condition on scalar elements, such as {"$gte": 5} (FerretDB gets the other forms wrong)');
        }
        out[op] = operators(arg, walk, walk.deeper(depth, here), here, true);
        break;
      default:
        throw fail('UNSUPPORTED_OPERATOR', here, `operator ${op} is not supported`);
    }
  }
  return out;
}

function scalarList(arg: unknown, walk: Walk, at: string, message: string, nonEmpty = false): Scalar[] {
  if (!Array.isArray(arg) || !arg.every(isScalar) || (nonEmpty && !arg.length)) throw fail('INVALID_FILTER', at, message);
  if (arg.length > walk.limits.maxList) throw fail('FILTER_TOO_COMPLEX', at, `lists hold at most ${walk.limits.maxList} values`);
  return arg;
}

/**
 * Patterns are matched by RE2 on every store (re2js in the embedded one, Go's RE2 in FerretDB;
 * MongoDB's PCRE agrees on what RE2 accepts): no lookaround, backreferences or named groups. The
 * screen for nested repetition (`(a+)+`) predates RE2 and stays, because a MongoDB server runs
 * the pattern with PCRE, which does backtrack. `x` is applied here (RE2 lacks it), so every store
 * receives the same plain pattern.
 */
function checkRegex(pattern: unknown, options: unknown, limits: QueryLimits, at: string): UserRegex {
  if (typeof pattern !== 'string') throw fail('INVALID_FILTER', at, '$regex takes a string');
  if (pattern.length > limits.maxRegexLength) throw fail('INVALID_FILTER', at, `$regex is at most ${limits.maxRegexLength} characters`);
  if (options !== undefined && (typeof options !== 'string' || !REGEX_OPTIONS.test(options))) throw fail('INVALID_FILTER', `${at.replace(/\$regex$/, '$options')}`, '$options takes the flags i, m, s and x');
  const problem = regexProblem(pattern);
  if (problem !== null) throw fail('UNSUPPORTED_OPERATOR', at, problem);
  try {
    return compileUserRegex(pattern, typeof options === 'string' ? options : '');
  } catch (err) {
    if (!(err instanceof UserRegexError)) throw err;
    if (err.reason === 'unsupported') throw fail('UNSUPPORTED_OPERATOR', at, `not supported by RE2 (the engine every store matches with): ${err.message}`);
    if (err.reason === 'too_complex') throw fail('FILTER_TOO_COMPLEX', at, err.message);
    throw fail('INVALID_FILTER', at, `not a valid regular expression: ${err.message}`);
  }
}

/**
 * Why a pattern is refused, or null: lookaround, backreferences and named groups (engines
 * disagree), or a repeated group holding a repetition at any depth (`(a+)+`, `((a*)b)*`,
 * `(?:x+){2}`): the shape of exponential backtracking in a backtracking engine (MongoDB's PCRE).
 * Shared with JSON Schema `pattern`s, so a schema means the same wherever it is checked.
 */
export function regexProblem(pattern: string): string | null {
  if (/\(\?[=!<]|\\[1-9]|\\k</.test(pattern)) return 'lookaround, backreferences and named groups are not supported';
  const groups: boolean[] = [false]; // per open group: does it hold a repetition?
  const quantifierAt = (i: number) => pattern[i] === '*' || pattern[i] === '+' || (pattern[i] === '{' && /^\{\d+(,\d*)?\}/.test(pattern.slice(i)));
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') { i++; continue; }
    if (c === '[') { // a character class: skip to its end
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      continue;
    }
    if (c === '(') groups.push(false);
    else if (c === ')' && groups.length > 1) {
      const inner = groups.pop()!;
      const repeated = quantifierAt(i + 1);
      if (repeated && inner) return 'a repeated group containing a repetition (such as "(a+)+") is not allowed';
      groups[groups.length - 1] ||= inner || repeated;
    } else if (quantifierAt(i)) groups[groups.length - 1] = true;
  }
  return null;
}

/** `{field: 1 | -1}` onto stored paths; at most `maxKeys` keys. */
export function translateSort(sort: unknown, maxKeys: number): Record<string, 1 | -1> {
  if (sort === undefined || sort === null) return {};
  if (!isPlain(sort)) throw fail('INVALID_SORT', 'body.sort', 'must be an object such as {"age": -1}');
  const entries = Object.entries(sort);
  if (entries.length > maxKeys) throw fail('INVALID_SORT', 'body.sort', `at most ${maxKeys} sort keys`);
  const out: Record<string, 1 | -1> = {};
  for (const [key, dir] of entries) {
    if (dir !== 1 && dir !== -1) throw fail('INVALID_SORT', `body.sort.${key}`, 'must be 1 or -1');
    let path: string;
    try {
      path = storedPath(key, `body.sort.${key}`);
    } catch (err) {
      throw fail('INVALID_SORT', `body.sort.${key}`, (err as Error).message.replace(/^[^:]*: /, ''));
    }
    out[path] = dir;
  }
  return out;
}

/** Inclusion (`{a: 1}`) or exclusion (`{a: 0}`), not both except for `_id`; no projection operators. */
export function checkProjection(projection: unknown, maxKeys: number): Record<string, 0 | 1> | undefined {
  if (projection === undefined || projection === null) return undefined;
  if (!isPlain(projection)) throw fail('INVALID_PROJECTION', 'body.projection', 'must be an object such as {"name": 1}');
  const entries = Object.entries(projection);
  if (entries.length > maxKeys) throw fail('INVALID_PROJECTION', 'body.projection', `at most ${maxKeys} fields`);
  const out: Record<string, 0 | 1> = {};
  for (const [key, v] of entries) {
    const at = `body.projection.${key}`;
    if (v !== 0 && v !== 1 && v !== true && v !== false) throw fail('INVALID_PROJECTION', at, 'must be 1 or 0 (projection operators are not supported)');
    try {
      storedPath(key, at);
    } catch (err) {
      throw fail('INVALID_PROJECTION', at, (err as Error).message.replace(/^[^:]*: /, ''));
    }
    out[key] = v === 1 || v === true ? 1 : 0;
  }
  const kinds = new Set(Object.entries(out).filter(([k]) => k !== '_id').map(([, v]) => v));
  if (kinds.size > 1) throw fail('INVALID_PROJECTION', 'body.projection', 'cannot mix inclusion and exclusion (except for _id)');
  return Object.keys(out).length ? out : undefined;
}
