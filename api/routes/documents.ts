import { z } from 'zod';
import { collectionScopeOf, createCollection, deleteCollection, deleteDocument, insertDocument, updateDocument } from '../../commands/documents.js';
import { checkSchema, collectionNameSchema, collectionStreamId, documentIdSchema, documentStreamId, storedPath } from '../../domain/documents/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { countCollections, findCollection, listCollections } from '../../projections/documents.js';
import { ValidationError } from '../errors.js';
import type { RouteDef } from '../route.js';
import { defineRoute } from '../route.js';
import { documentsExtraRoutes } from './documents-search.js';
import {
  auth, collectionNotFound, collectionOut, collectionParams, collectionView, documentOut, documentParams, readErrors, resolveCollection, tag, writeErrors,
} from './documents-support.js';
import { pageQuery } from './pagination.js';

/**
 * The per-user document database: collections (list, create with optional JSON Schema and
 * indexes, delete) and documents (insert, replace or update with operators, delete). Collection
 * writes go through the collection aggregate (stream `collection-<id>`), document writes through
 * the document's own stream (`document-<collectionId>.<documentId>`); reads come from the projections.
 */
const indexInput = z.union([
  z.string().describe('a field path, ascending'),
  z.strictObject({ keys: z.record(z.string(), z.union([z.literal(1), z.literal(-1)])) }),
]);

const createBody = z.strictObject({
  name: collectionNameSchema,
  schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema every document must satisfy'),
  indexes: z.array(indexInput).optional(),
});

const insertBody = z.strictObject({
  id: documentIdSchema.optional().describe('the document id; generated when absent (a string `_id` in the document works too)'),
  document: z.record(z.string(), z.unknown()),
});

const updateBody = z.union([
  z.strictObject({ document: z.record(z.string(), z.unknown()).describe('full replacement') }),
  z.strictObject({ update: z.record(z.string(), z.unknown()).describe('update operators: $set, $unset, $inc, $push, $pull, $addToSet') }),
]);

const limitsOf = (config: { DOCUMENTS_MAX_DOCUMENT_BYTES: number; DOCUMENTS_MAX_DOCUMENT_DEPTH: number }) => ({
  maxBytes: config.DOCUMENTS_MAX_DOCUMENT_BYTES,
  maxDepth: config.DOCUMENTS_MAX_DOCUMENT_DEPTH,
});

function indexesOf(input: Array<z.infer<typeof indexInput>>, max: number) {
  if (input.length > max) throw new ValidationError([{ field: 'body.indexes', message: `at most ${max} indexes` }]);
  return input.map((spec, i) => {
    const keys = typeof spec === 'string' ? { [spec]: 1 as const } : spec.keys;
    const fields = Object.keys(keys);
    if (!fields.length || fields.length > 5) throw new ValidationError([{ field: `body.indexes.${i}`, message: 'an index has 1-5 fields' }]);
    for (const f of fields) {
      try {
        storedPath(f, `body.indexes.${i}`);
      } catch (err) {
        throw new ValidationError([{ field: `body.indexes.${i}`, message: (err as Error).message }]);
      }
    }
    return { keys };
  });
}

/** Moves a string `_id` out of the document into the id (they must agree when both are given). */
function splitId(body: z.infer<typeof insertBody>, generated: () => string): { documentId: string; document: Record<string, unknown> } {
  const { _id, ...document } = body.document;
  if (_id !== undefined) {
    const parsed = documentIdSchema.safeParse(_id);
    if (!parsed.success) throw new ValidationError([{ field: 'body.document._id', message: parsed.error.issues[0].message }]);
    if (body.id !== undefined && body.id !== _id) throw new ValidationError([{ field: 'body.document._id', message: 'differs from body.id' }]);
  }
  return { documentId: body.id ?? (_id as string | undefined) ?? generated(), document };
}

const coreRoutes = [
  defineRoute({
    method: 'GET',
    path: '/db/collections',
    operationId: 'listCollections',
    summary: "list the user's collections (name, document count, size, created/updated), by name",
    tag,
    auth,
    permission: 'view_resources',
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(collectionOut), nextCursor: z.string().nullable() }) } },
    async handler({ principal, query, services }) {
      const page = await listCollections(services.readStore, collectionScopeOf(principal!), query.limit, query.cursor ?? null);
      return { status: 200, body: { success: true, items: page.items.map(collectionView), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/db/collections',
    operationId: 'createCollection',
    summary: 'create a collection (name unique per owner; optional JSON Schema enforced on every write; optional indexes)',
    tag,
    auth,
    permission: 'edit_resources',
    body: createBody,
    responses: { 201: { description: 'created', schema: z.object({ success: z.literal(true), collection: collectionOut }) }, ...writeErrors },
    async handler({ principal, body, services, command, settle }) {
      const { config } = services;
      const scope = collectionScopeOf(principal!);
      let schema: string | null = null;
      if (body.schema) {
        schema = checkSchema(body.schema);
        if (Buffer.byteLength(schema) > config.DOCUMENTS_MAX_SCHEMA_BYTES) throw new ValidationError([{ field: 'body.schema', message: `at most ${config.DOCUMENTS_MAX_SCHEMA_BYTES} bytes` }]);
      }
      const indexes = indexesOf(body.indexes ?? [], config.DOCUMENTS_MAX_INDEXES);
      // A soft limit read from the read model: concurrent creations may pass it by a few.
      if ((await countCollections(services.readStore, scope)) >= config.DOCUMENTS_MAX_COLLECTIONS) {
        throw new DomainError('TOO_MANY_COLLECTIONS', `at most ${config.DOCUMENTS_MAX_COLLECTIONS} collections per owner`, 'conflict');
      }
      const collectionId = services.newId();
      const result = await createCollection(services.eventStore, command, scope, { collectionId, name: body.name, schema, indexes });
      await settle(result.position, collectionStreamId(collectionId));
      const meta = await findCollection(services.readStore, scope, body.name);
      return { status: 201, body: { success: true, collection: meta ? collectionView(meta) : null } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/db/collections/{collection}',
    operationId: 'getCollection',
    summary: 'get one collection (added operation)',
    tag,
    auth,
    permission: 'view_resources',
    params: collectionParams,
    responses: { 200: { description: 'the collection', schema: z.object({ success: z.literal(true), collection: collectionOut }) }, ...readErrors },
    async handler({ principal, params, services }) {
      const { meta } = await resolveCollection(services.readStore, principal, params.collection);
      return { status: 200, body: { success: true, collection: collectionView(meta) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/db/collections/{collection}',
    operationId: 'deleteCollection',
    summary: 'delete a collection with its metadata and all documents (its history stays in the log; the name becomes free)',
    tag,
    auth,
    permission: 'edit_resources',
    params: collectionParams,
    responses: { 200: { description: 'deleted', schema: z.object({ success: z.literal(true), id: z.string(), name: z.string(), deletedDocuments: z.number() }) }, ...readErrors },
    async handler({ principal, params, services, command, settle }) {
      const { meta, scope } = await resolveCollection(services.readStore, principal, params.collection);
      const result = await deleteCollection(services.eventStore, command, scope, meta._id, { claimTtlMs: services.config.DOCUMENTS_CLAIM_TTL_MS });
      await settle(result.position, collectionStreamId(meta._id));
      const deleted = result.events[0]?.type === 'CollectionDeleted' ? result.events[0].data.documents : 0;
      return { status: 200, body: { success: true, id: meta._id, name: meta.name, deletedDocuments: deleted } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/db/collections/{collection}/documents',
    operationId: 'insertDocument',
    summary: 'insert a document (id generated or given; a duplicate id answers 409 DOCUMENT_EXISTS)',
    tag,
    auth,
    permission: 'edit_resources',
    params: collectionParams,
    body: insertBody,
    responses: { 201: { description: 'inserted', schema: z.object({ success: z.literal(true), document: documentOut, revision: z.number() }) }, ...writeErrors },
    async handler({ principal, params, body, services, command, settle }) {
      const { meta, scope } = await resolveCollection(services.readStore, principal, params.collection);
      const { documentId, document } = splitId(body, services.newId);
      const limits = { ...limitsOf(services.config), maxDocuments: services.config.DOCUMENTS_MAX_PER_COLLECTION, claimTtlMs: services.config.DOCUMENTS_CLAIM_TTL_MS };
      const result = await insertDocument(services.eventStore, command, scope, meta._id, { documentId, document }, limits);
      await settle(result.position, documentStreamId(meta._id, documentId));
      const revision = result.events[0]?.data.revision ?? result.revision;
      return { status: 201, body: { success: true, document: { _id: documentId, ...document }, revision }, headers: { ETag: `"${revision}"` } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/db/collections/{collection}/documents/{documentId}',
    operationId: 'updateDocument',
    summary: 'update a document: `{document}` replaces it, `{update}` applies $set, $unset, $inc, $push, $pull, $addToSet (If-Match: the revision you saw)',
    tag,
    auth,
    permission: 'edit_resources',
    params: documentParams,
    body: updateBody,
    responses: { 200: { description: 'updated', schema: z.object({ success: z.literal(true), document: documentOut, revision: z.number() }) }, ...writeErrors, 412: { description: 'If-Match names an older revision' } },
    async handler({ principal, params, body, services, command, settle, koa }) {
      const { meta, scope } = await resolveCollection(services.readStore, principal, params.collection);
      let change: { document: Record<string, unknown> } | { update: Record<string, unknown> } = body;
      if ('document' in body) {
        const { _id, ...document } = body.document;
        if (_id !== undefined && _id !== params.documentId) throw new ValidationError([{ field: 'body.document._id', message: 'cannot change a document\'s _id' }]);
        change = { document };
      }
      const ifMatch = koa.get('if-match').replace(/"/g, '');
      if (ifMatch && !/^\d{1,15}$/.test(ifMatch)) throw new ValidationError([{ field: 'header.if-match', message: 'must be a revision such as "12"' }]);
      const options = ifMatch ? { ifMatch: Number(ifMatch) } : {};
      const result = await updateDocument(services.eventStore, command, scope, meta._id, params.documentId, change, limitsOf(services.config), options);
      await settle(result.position, documentStreamId(meta._id, params.documentId));
      const event = result.events[0];
      const document = event?.type === 'DocumentChanged' ? event.data.document : {};
      const revision = event?.data.revision ?? result.revision;
      return { status: 200, body: { success: true, document: { _id: params.documentId, ...document }, revision }, headers: { ETag: `"${revision}"` } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/db/collections/{collection}/documents/{documentId}',
    operationId: 'deleteDocument',
    summary: 'delete a document (its history stays readable)',
    tag,
    auth,
    permission: 'edit_resources',
    params: documentParams,
    responses: { 200: { description: 'deleted', schema: z.object({ success: z.literal(true), id: z.string() }) }, ...readErrors },
    async handler({ principal, params, services, command, settle }) {
      const { meta, scope } = await resolveCollection(services.readStore, principal, params.collection);
      const result = await deleteDocument(services.eventStore, command, scope, meta._id, params.documentId);
      await settle(result.position, documentStreamId(meta._id, params.documentId));
      return { status: 200, body: { success: true, id: params.documentId } };
    },
  }),
];

export const documentsRoutes: RouteDef[] = [...coreRoutes, ...documentsExtraRoutes];
export { collectionNotFound };
