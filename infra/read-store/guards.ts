/**
 * Input checks both adapters share, so the embedded and the MongoDB store refuse the same things.
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
  if (!isPlain(value)) return; // Dates, RegExps and the like hold no operators
  for (const key of Object.keys(value)) {
    if (FORBIDDEN.has(key)) throw new ForbiddenOperatorError(key);
    const child = (value as Record<string, unknown>)[key];
    if (key === '$elemMatch') assertPortableElemMatch(child);
    assertAllowedOperators(child);
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

/** MongoDB reads a negative limit as "one batch of |n|" and rejects a negative skip; refuse both
 * so the embedded store cannot quietly differ. 0 or undefined limit means no limit. */
export function assertFindWindow(options: { skip?: number; limit?: number }): void {
  for (const key of ['skip', 'limit'] as const) {
    const v = options[key];
    if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw new RangeError(`${key} must be a non-negative integer`);
  }
}

/** Checkpoints are event-log positions; anything else is a caller bug worth failing loudly on. */
export function assertPosition(position: number): void {
  if (!Number.isSafeInteger(position) || position < 0) throw new RangeError('checkpoint position must be a non-negative safe integer');
}
