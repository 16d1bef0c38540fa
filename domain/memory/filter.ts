import type { MemoryMetadata, MetadataFilter, MetadataValue } from './limits.js';

/**
 * Metadata filters, evaluated in process on the memory index (projections/memory-index.ts), with
 * MongoDB's meaning for the subset we accept: all keys ANDed; a bare value is equality; `null`
 * matches a missing key too; `$ne`/`$nin` match a missing key; `$gt/$gte/$lt/$lte` compare only
 * numbers with numbers and strings with strings (code-point order), anything else is no match.
 */
type Value = MetadataValue | undefined;

const equal = (a: Value, b: MetadataValue) => (b === null ? a === null || a === undefined : a === b);

function compare(a: Value, b: string | number): number | null {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return null;
}

function matchesCondition(value: Value, condition: MetadataFilter[string]): boolean {
  if (condition === null || typeof condition !== 'object') return equal(value, condition);
  for (const [op, operand] of Object.entries(condition)) {
    if (operand === undefined) continue;
    let ok: boolean;
    switch (op) {
      case '$eq':
        ok = equal(value, operand as MetadataValue);
        break;
      case '$ne':
        ok = !equal(value, operand as MetadataValue);
        break;
      case '$in':
        ok = (operand as MetadataValue[]).some((o) => equal(value, o));
        break;
      case '$nin':
        ok = !(operand as MetadataValue[]).some((o) => equal(value, o));
        break;
      default: {
        const c = compare(value, operand as string | number);
        ok = c !== null && (op === '$gt' ? c > 0 : op === '$gte' ? c >= 0 : op === '$lt' ? c < 0 : c <= 0);
      }
    }
    if (!ok) return false;
  }
  return true;
}

export function matchesMetadataFilter(metadata: MemoryMetadata, filter: MetadataFilter | undefined): boolean {
  if (!filter) return true;
  for (const [key, condition] of Object.entries(filter)) {
    if (!matchesCondition(Object.hasOwn(metadata, key) ? metadata[key] : undefined, condition)) return false;
  }
  return true;
}
