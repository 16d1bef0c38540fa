import { z } from 'zod';
import { documentHistory } from '../../commands/documents-history.js';
import { checkProjection, translateFilter, translateSort } from '../../domain/documents/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { getDocument } from '../../projections/documents.js';
import { searchDocuments } from '../../projections/documents-search.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { defineRoute } from '../route.js';
import { auth, collectionParams, documentOut, documentParams, readErrors, resolveCollection, tag, translatingStoreErrors } from './documents-support.js';
import { pageQuery } from './pagination.js';

const MAX_SORT_KEYS = 5;
const MAX_PROJECTION_KEYS = 50;
const DEFAULT_LIMIT = 20;

const searchBody = z.strictObject({
  filter: z.record(z.string(), z.unknown()).optional().describe('MongoDB query: comparison, logical, element, array and $regex operators'),
  sort: z.record(z.string(), z.unknown()).optional().describe('{field: 1 | -1}, at most 5 keys; `_id` breaks ties'),
  limit: z.number().int().min(1).optional().describe(`page size, default ${DEFAULT_LIMIT}, at most DOCUMENTS_MAX_SEARCH_LIMIT`),
  cursor: z.string().max(2048).optional().describe('`nextCursor` of the previous page of the same search'),
  projection: z.record(z.string(), z.unknown()).optional().describe('{field: 1} to include or {field: 0} to exclude'),
});

const historyEntryOut = z.object({
  revision: z.number(),
  type: z.enum(['inserted', 'updated', 'deleted']),
  document: documentOut.nullable(),
  update: z.record(z.string(), z.unknown()).nullable(),
  at: z.string(),
  actorId: z.string().nullable(),
});

/** Search, one document, and a document's history. */
export const documentsExtraRoutes = [
  defineRoute({
    method: 'POST',
    path: '/db/collections/{collection}/search',
    operationId: 'searchDocuments',
    summary: 'search documents (MongoDB-style filter, sort, limit, cursor, projection); $where, $function, $accumulator and $expr are refused',
    tag,
    auth,
    permission: 'view_resources',
    params: collectionParams,
    body: searchBody,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(documentOut), nextCursor: z.string().nullable() }) }, ...readErrors },
    async handler({ principal, params, body, services }) {
      const { config } = services;
      const { meta } = await resolveCollection(services.readStore, principal, params.collection);
      const limit = body.limit ?? DEFAULT_LIMIT;
      if (limit > config.DOCUMENTS_MAX_SEARCH_LIMIT) throw new ValidationError([{ field: 'body.limit', message: `at most ${config.DOCUMENTS_MAX_SEARCH_LIMIT}` }]);
      const filter = translateFilter(body.filter, {
        maxDepth: config.DOCUMENTS_MAX_FILTER_DEPTH,
        maxNodes: config.DOCUMENTS_MAX_FILTER_CONDITIONS,
        maxList: config.DOCUMENTS_MAX_FILTER_LIST,
        maxRegexLength: config.DOCUMENTS_MAX_REGEX_LENGTH,
      });
      const sort = translateSort(body.sort, MAX_SORT_KEYS);
      const projection = checkProjection(body.projection, MAX_PROJECTION_KEYS);
      const page = await translatingStoreErrors(() =>
        searchDocuments(services.readStore, meta._id, {
          filter, sort, projection, limit, cursor: body.cursor ?? null, maxTimeMS: config.DOCUMENTS_SEARCH_TIMEOUT_MS, maxOffset: config.DOCUMENTS_MAX_SEARCH_OFFSET,
        }),
      );
      return { status: 200, body: { success: true, items: page.items, nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/db/collections/{collection}/documents/{documentId}',
    operationId: 'getDocument',
    summary: 'get one document (added operation); ETag is its revision',
    tag,
    auth,
    permission: 'view_resources',
    params: documentParams,
    responses: { 200: { description: 'the document', schema: z.object({ success: z.literal(true), document: documentOut, revision: z.number() }) }, ...readErrors },
    async handler({ principal, params, services }) {
      const { meta } = await resolveCollection(services.readStore, principal, params.collection);
      const found = await getDocument(services.readStore, meta._id, params.documentId);
      if (!found) throw new NotFoundError('document', 'DOCUMENT_NOT_FOUND');
      return { status: 200, body: { success: true, document: found.document, revision: found.revision }, headers: { ETag: `"${found.revision}"` } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/db/collections/{collection}/documents/{documentId}/history',
    operationId: 'getDocumentHistory',
    summary: "a document's history from the event log, newest first, also after its deletion (added operation)",
    tag,
    auth,
    permission: 'view_resources',
    params: documentParams,
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(historyEntryOut), nextCursor: z.string().nullable() }) }, ...readErrors },
    async handler({ principal, params, query, services }) {
      const { meta, scope } = await resolveCollection(services.readStore, principal, params.collection);
      let before: number | null = null;
      if (query.cursor !== undefined) {
        if (!/^\d{1,15}$/.test(query.cursor)) throw new DomainError('INVALID_CURSOR', 'cursor is malformed', 'invalid', { field: 'query.cursor' });
        before = Number(query.cursor);
      }
      const page = await documentHistory(services.eventStore, scope, meta._id, params.documentId, query.limit, before);
      return { status: 200, body: { success: true, items: page.items, nextCursor: page.next === null ? null : String(page.next) } };
    },
  }),
];
