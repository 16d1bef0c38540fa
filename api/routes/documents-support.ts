import { z } from 'zod';
import { collectionScopeOf } from '../../commands/documents.js';
import { collectionNameSchema, documentIdSchema, type CollectionScope } from '../../domain/documents/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { Principal } from '../../domain/shared/principal.js';
import { ForbiddenOperatorError, QueryTimeoutError, UnsupportedError, type ReadStore } from '../../ports/read-store.js';
import { findCollection, type CollectionMeta } from '../../projections/documents.js';
import { NotFoundError } from '../errors.js';

export const tag = 'Database';
export const auth = 'bearer' as const;

export const collectionParams = z.strictObject({ collection: collectionNameSchema });
export const documentParams = z.strictObject({ collection: collectionNameSchema, documentId: documentIdSchema });

export const documentOut = z.record(z.string(), z.unknown()).describe('the document, with its `_id`');
export const collectionOut = z.object({
  id: z.string(),
  name: z.string(),
  documentCount: z.number(),
  sizeBytes: z.number(),
  schema: z.record(z.string(), z.unknown()).nullable(),
  indexes: z.array(z.object({ keys: z.record(z.string(), z.number()) })),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const collectionNotFound = () => new NotFoundError('collection', 'COLLECTION_NOT_FOUND');

export function collectionView(m: CollectionMeta) {
  return {
    id: m._id,
    name: m.name,
    documentCount: m.count,
    sizeBytes: m.bytes,
    schema: m.schema === null ? null : (JSON.parse(m.schema) as Record<string, unknown>),
    indexes: JSON.parse(m.indexes) as Array<{ keys: Record<string, number> }>,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  };
}

/** The caller's collection named in the path; another tenant's answers 404 like a missing one. */
export async function resolveCollection(store: ReadStore, principal: Principal | null, name: string): Promise<{ meta: CollectionMeta; scope: CollectionScope }> {
  const scope = collectionScopeOf(principal!);
  const meta = await findCollection(store, scope, name);
  if (!meta) throw collectionNotFound();
  return { meta, scope };
}

/** Read-store refusals as the API's errors (the domain checks should have caught them first). */
export async function translatingStoreErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof QueryTimeoutError) {
      throw new DomainError('QUERY_TIMEOUT', `the search ran longer than ${err.maxTimeMS} ms; narrow the filter or add an index on the filtered field`, 'invalid', { maxTimeMS: err.maxTimeMS });
    }
    if (err instanceof ForbiddenOperatorError) throw new DomainError('FORBIDDEN_OPERATOR', err.message, 'invalid', { operator: err.operator });
    if (err instanceof UnsupportedError) throw new DomainError('UNSUPPORTED_OPERATOR', err.message, 'invalid');
    throw err;
  }
}

export const readErrors = {
  400: { description: 'bad input (VALIDATION_FAILED, INVALID_FILTER, FORBIDDEN_OPERATOR, UNSUPPORTED_OPERATOR, …)' },
  404: { description: 'no such collection or document (COLLECTION_NOT_FOUND, DOCUMENT_NOT_FOUND), also another tenant\'s' },
};
export const writeErrors = {
  ...readErrors,
  409: { description: 'DOCUMENT_EXISTS, COLLECTION_NAME_TAKEN, COLLECTION_FULL, TOO_MANY_COLLECTIONS or CONCURRENCY_CONFLICT' },
};
