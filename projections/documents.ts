import type { DocumentEvent, DocumentStreamEvent, CollectionScope, JsonDocument } from '../domain/documents/index.js';
import { COLLECTION_CATEGORY, DOCUMENT_CATEGORY, storedPath } from '../domain/documents/index.js';
import { categoryOf, type RecordedEvent } from '../domain/shared/events.js';
import { DuplicateKeyError, type Doc, type ReadStore } from '../ports/read-store.js';
import type { Projector } from './projector.js';

/**
 * Two read models from the `collection-…` and `document-…` streams:
 * - `document_collections`: one row per live collection (name, owner, schema and indexes as JSON
 *   text, document count and bytes, timestamps);
 * - one physical collection per user collection, `udocs_<collectionId>`, holding
 *   `{_id: <documentId>, r: <revision>, d: <document without _id>}`. A collection of its own keeps
 *   a search from scanning other users' documents (the embedded store scans a whole collection),
 *   lets its indexes be the user's, and makes deleting a collection one drop.
 * A rebuild drops `document_collections`; every `udocs_…` is dropped again when its
 * CollectionCreated is replayed, and dropped for good by CollectionDeleted.
 */
export const COLLECTIONS_META = 'document_collections';
export const physicalCollection = (collectionId: string) => `udocs_${collectionId.replace(/[^A-Za-z0-9_]/g, '')}`;

export interface CollectionMeta extends Doc {
  name: string;
  nameLower: string;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  schema: string | null;
  /** JSON text of `[{keys: {field: 1 | -1}}]` (dotted keys cannot be stored in FerretDB). */
  indexes: string;
  count: number;
  bytes: number;
  createdAt: string;
  updatedAt: string;
  version: number;
  /** Log position of the last event projected into this row (absent on rows projected before it existed). */
  position?: number;
}

export interface StoredDocument extends Doc {
  r: number;
  d: JsonDocument;
}

export const documentsProjector: Projector = {
  name: 'documents',
  categories: [COLLECTION_CATEGORY, DOCUMENT_CATEGORY],
  collections: [COLLECTIONS_META],
  async setup(store) {
    await store.collection(COLLECTIONS_META).createIndex({ keys: { orgId: 1, workspaceId: 1, ownerId: 1, nameLower: 1 } });
  },
  async project(recorded, store) {
    if (categoryOf(recorded.streamId) === DOCUMENT_CATEGORY) return projectDocument(recorded as RecordedEvent & DocumentStreamEvent, store);
    const event = recorded as RecordedEvent & DocumentEvent;
    const collectionId = recorded.streamId.slice('collection-'.length);
    const meta = store.collection<CollectionMeta>(COLLECTIONS_META);
    const docs = store.collection<StoredDocument>(physicalCollection(collectionId));
    // Absolute totals (events written before per-document streams carry them), guarded by
    // position like the increments of projectDocument, so a redelivered older event cannot undo them.
    const touch = (count: number, bytes: number, at: string) =>
      meta.updateOne({ _id: collectionId, ...notYet(recorded.position) }, { $set: { count, bytes, updatedAt: at, version: recorded.revision, position: recorded.position } });
    switch (event.type) {
      case 'CollectionCreated': {
        const d = event.data;
        await docs.drop();
        for (const index of d.indexes) {
          const keys = Object.fromEntries(Object.entries(index.keys).map(([k, dir]) => [storedPath(k, 'index'), dir]));
          await docs.createIndex({ keys });
        }
        await meta.replaceOne(
          { _id: collectionId },
          {
            _id: collectionId, name: d.name, nameLower: d.name.toLowerCase(), ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId,
            schema: d.schema, indexes: JSON.stringify(d.indexes), count: 0, bytes: 0, createdAt: d.createdAt, updatedAt: d.createdAt, version: recorded.revision,
            position: recorded.position,
          },
          { upsert: true },
        );
        return;
      }
      case 'DocumentInserted':
        await insertOrReplace(docs, { _id: event.data.documentId, r: recorded.revision, d: event.data.document });
        await touch(event.data.count, event.data.bytes, event.data.at);
        return;
      case 'DocumentUpdated':
        await docs.replaceOne({ _id: event.data.documentId }, { _id: event.data.documentId, r: recorded.revision, d: event.data.document }, { upsert: true });
        await touch(event.data.count, event.data.bytes, event.data.at);
        return;
      case 'DocumentDeleted':
        await docs.deleteOne({ _id: event.data.documentId });
        await touch(event.data.count, event.data.bytes, event.data.at);
        return;
      case 'CollectionDeleted':
        await docs.drop();
        await meta.deleteOne({ _id: collectionId });
        return;
    }
  },
};

/** Matches a row this event has not reached yet (rows projected before `position` existed have none). */
const notYet = (position: number) => ({ position: { $not: { $gte: position } } });

/**
 * A write to one document's stream. The collection's totals move by increments, applied at most
 * once per event by the row's last projected position (events arrive in log order, so a redelivered
 * one is at or below it); the document row is an absolute value. A write to a collection that is
 * gone (its CollectionDeleted is earlier in the log) has nowhere to go and is dropped: the command
 * layer answered that write 404 (commands/documents.ts, writtenBeforeDeletion), so it is void.
 */
async function projectDocument(recorded: RecordedEvent & DocumentStreamEvent, store: ReadStore): Promise<void> {
  if (recorded.type === 'DocumentInsertLapsed') return; // a fence on the stream, not a write
  const { collectionId, documentId, revision, at } = recorded.data;
  const meta = store.collection<CollectionMeta>(COLLECTIONS_META);
  if (!(await meta.findOne({ _id: collectionId }, { projection: { _id: 1 } }))) return;
  const [count, bytes] =
    recorded.type === 'DocumentAdded' ? [1, recorded.data.size]
    : recorded.type === 'DocumentChanged' ? [0, recorded.data.size - recorded.data.previousSize]
    : [-1, -recorded.data.previousSize];
  await meta.updateOne({ _id: collectionId, ...notYet(recorded.position) }, { $inc: { count, bytes }, $set: { updatedAt: at, position: recorded.position } });
  const docs = store.collection<StoredDocument>(physicalCollection(collectionId));
  if (recorded.type === 'DocumentRemoved') await docs.deleteOne({ _id: documentId });
  else await docs.replaceOne({ _id: documentId }, { _id: documentId, r: revision, d: recorded.data.document }, { upsert: true });
}

/** A plain insert is the cheapest write on every store; the row exists already only when the event
 * is redelivered, or the id is reused after a deletion whose event was redelivered too. */
async function insertOrReplace(docs: ReturnType<ReadStore['collection']>, row: StoredDocument): Promise<void> {
  try {
    await docs.insertOne(row);
  } catch (err) {
    if (!(err instanceof DuplicateKeyError)) throw err;
    await docs.replaceOne({ _id: row._id }, row, { upsert: true });
  }
}

export const documentsProjectors: Projector[] = [documentsProjector];

// ---------------------------------------------------------------- queries

function scopeFilter(scope: CollectionScope): Record<string, unknown> {
  const filter: Record<string, unknown> = { orgId: scope.orgId, workspaceId: scope.workspaceId };
  if (scope.orgId === null) filter.ownerId = scope.userId;
  return filter;
}

/** The caller's collection by name (case-insensitive), or null, also for another tenant's. */
export function findCollection(store: ReadStore, scope: CollectionScope, name: string): Promise<CollectionMeta | null> {
  return store.collection<CollectionMeta>(COLLECTIONS_META).findOne({ ...scopeFilter(scope), nameLower: name.toLowerCase() });
}

export function listCollections(store: ReadStore, scope: CollectionScope, limit: number, cursor: string | null) {
  return store.collection<CollectionMeta>(COLLECTIONS_META).page(scopeFilter(scope), { sort: { nameLower: 1 }, limit, cursor });
}

export function countCollections(store: ReadStore, scope: CollectionScope): Promise<number> {
  return store.collection(COLLECTIONS_META).count(scopeFilter(scope));
}

export async function getDocument(store: ReadStore, collectionId: string, documentId: string): Promise<{ document: JsonDocument; revision: number } | null> {
  const row = await store.collection<StoredDocument>(physicalCollection(collectionId)).findOne({ _id: documentId });
  return row ? { document: { _id: row._id, ...row.d }, revision: row.r } : null;
}
