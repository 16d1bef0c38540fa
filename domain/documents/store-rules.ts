/**
 * What a read-store filter, update or projection may contain, whichever adapter runs it, so the
 * embedded and the MongoDB store refuse the same things (both adapters and the documents commands
 * call these; the API sees the errors through the read-store port).
 *
 * Filters, updates and projections can reach the read store from user input (list endpoints pass
 * filters through). `$where`, `$function` and `$accumulator` run JavaScript inside the store
 * (MongoDB server-side JS, or mingo's `new Function` when scripting is on), so both adapters
 * refuse them anywhere in the tree.
 *
 * Some valid MongoDB is refused too, because FerretDB v1.24 gets it wrong, sometimes silently,
 * and the port only offers what every server does (see DESIGN.md §4 and FIELD-NOTES "FerretDB").
 */
const FORBIDDEN = new Set(['$where', '$function', '$accumulator']);
/** FerretDB v1.24 refuses these with an error inside `$elemMatch`. */
const ELEM_MATCH_LOGICAL = new Set(['$and', '$or', '$nor', '$not']);

import { UserRegexError, compileUserRegex } from './regex.js';

export class ForbiddenOperatorError extends Error {
  readonly code = 'FORBIDDEN_OPERATOR';
  constructor(readonly operator: string) {
    super(`operator ${operator} is not allowed`);
    this.name = 'ForbiddenOperatorError';
  }
}

/** Valid MongoDB that not every supported server executes correctly. */
export class UnsupportedError extends Error {
  readonly code = 'UNSUPPORTED';
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedError';
  }
}

const isPlain = (v: object) => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * Throws ForbiddenOperatorError if any key at any depth is a forbidden operator, and
 * UnsupportedError for an `$elemMatch` on array elements that are documents (`{sku: 'a'}`):
 * FerretDB v1.24 rejects field names there ("unknown operator") and, worse, returns nothing for
 * `{sku: {$eq: 'a'}}`. `$elemMatch` with operators on scalar elements (`{$gte: 1, $lt: 5}`) works.
 */
export function assertAllowedOperators(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) assertAllowedOperators(item);
    return;
  }
  if (value instanceof RegExp) return assertRe2(value.source, value.flags);
  if (!isPlain(value)) return; // Dates and the like hold no operators
  for (const key of Object.keys(value)) {
    if (FORBIDDEN.has(key)) throw new ForbiddenOperatorError(key);
    const child = (value as Record<string, unknown>)[key];
    if (key === '$elemMatch') assertPortableElemMatch(child);
    if (key === '$regex' && typeof child === 'string') {
      const options = (value as Record<string, unknown>).$options;
      assertRe2(child, typeof options === 'string' ? options : '');
    }
    assertAllowedOperators(child);
  }
}

/**
 * The embedded store matches patterns with RE2 (re2js); refusing what RE2 cannot run on every
 * adapter keeps the two stores alike (FerretDB runs Go's RE2 anyway).
 */
function assertRe2(pattern: string, flags: string): void {
  try {
    compileUserRegex(pattern, flags.replace(/[gyud]/g, ''));
  } catch (err) {
    if (err instanceof UserRegexError) throw new UnsupportedError(`regular expression /${pattern}/: ${err.message} (patterns are matched by RE2)`);
    throw err;
  }
}

function assertPortableElemMatch(cond: unknown): void {
  const keys = cond !== null && typeof cond === 'object' ? Object.keys(cond) : [];
  const bad = keys.find((k) => !k.startsWith('$') || ELEM_MATCH_LOGICAL.has(k));
  if (bad === undefined) return;
  throw new UnsupportedError(`$elemMatch supports only operator conditions on scalar elements here, not '${bad}' (FerretDB lacks it)`);
}

/** FerretDB v1.24 refuses arrays directly inside arrays; refuse them everywhere. */
export function assertNoNestedArrays(value: unknown, inArray = false): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    if (inArray) throw new UnsupportedError('arrays nested directly in arrays are not supported (FerretDB lacks them)');
    for (const item of value) assertNoNestedArrays(item, true);
    return;
  }
  if (!isPlain(value)) return;
  for (const key of Object.keys(value)) assertNoNestedArrays((value as Record<string, unknown>)[key]);
}
