import { createHash } from 'node:crypto';
import { Query } from 'mingo';
import type { JsonDocument } from '../domain/documents/index.js';
import { InvalidCursorError, type Filter, type ReadStore, type Sort } from '../ports/read-store.js';
import { physicalCollection, type StoredDocument } from './documents.js';

/**
 * A search over one user collection. The filter and sort arrive already checked and rewritten onto
 * the stored shape (domain/documents/query.ts); the projection is applied here, in JavaScript, on
 * both configurations, so it cannot differ between the stores.
 *
 * Pages use an offset cursor bound to the query (a hash of filter and sort): keyset cursors would
 * skip documents whose sort field is missing, null or of mixed types, which user documents often
 * are. The order is total (`_id` breaks ties); a page boundary shifts if documents before it are
 * inserted or deleted between requests.
 */
export interface SearchInput {
  filter: Filter;
  sort: Sort;
  projection?: Record<string, 0 | 1>;
  limit: number;
  cursor?: string | null;
  maxTimeMS: number;
  maxOffset: number;
}

export interface SearchResult {
  items: JsonDocument[];
  nextCursor: string | null;
}

export async function searchDocuments(store: ReadStore, collectionId: string, input: SearchInput): Promise<SearchResult> {
  const sort: Sort = Object.keys(input.sort).length ? input.sort : { _id: 1 };
  const print = fingerprint(input.filter, sort);
  const offset = input.cursor ? decodeOffset(input.cursor, print) : 0;
  if (offset > input.maxOffset) throw new InvalidCursorError();
  const rows = await store
    .collection<StoredDocument>(physicalCollection(collectionId))
    .find(input.filter, { sort, skip: offset, limit: input.limit + 1, maxTimeMS: input.maxTimeMS });
  const page = rows.slice(0, input.limit).map((row) => ({ _id: row._id, ...row.d }) as JsonDocument);
  const more = rows.length > input.limit && offset + input.limit <= input.maxOffset;
  return { items: project(page, input.projection), nextCursor: more ? encodeOffset(offset + input.limit, print) : null };
}

export function project(items: JsonDocument[], projection?: Record<string, 0 | 1>): JsonDocument[] {
  if (!projection) return items;
  return new Query({}, { scriptEnabled: false }).find(items, projection).all() as JsonDocument[];
}

function fingerprint(filter: Filter, sort: Sort): string {
  return createHash('sha256').update(JSON.stringify([filter, Object.entries(sort)])).digest('base64url').slice(0, 16);
}

function encodeOffset(offset: number, print: string): string {
  return Buffer.from(JSON.stringify({ o: offset, f: print }), 'utf8').toString('base64url');
}

function decodeOffset(cursor: string, print: string): number {
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    const { o, f } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o?: unknown; f?: unknown };
    if (f !== print || !Number.isInteger(o) || (o as number) < 0) throw new Error('mismatch');
    return o as number;
  } catch {
    throw new InvalidCursorError();
  }
}
