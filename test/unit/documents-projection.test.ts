import { expect } from 'chai';
import type { DocumentEvent, DocumentStreamEvent } from '../../domain/documents/index.js';
import { COLLECTIONS_META, documentsProjector, physicalCollection } from '../../projections/documents.js';
import { projectionSpec, type GivenEvent } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const stream = 'collection-c1';
const on = (event: DocumentEvent): GivenEvent => ({ streamId: stream, event });
const created = on({
  type: 'CollectionCreated',
  data: { collectionId: 'c1', name: 'People', ownerId: 'u1', orgId: null, workspaceId: null, schema: null, indexes: [{ keys: { age: 1 } }], createdAt: at },
});
const inserted = (documentId: string, document: Record<string, unknown>, count: number, bytes: number) =>
  on({ type: 'DocumentInserted', data: { documentId, document, size: JSON.stringify(document).length, previousRevision: null, count, bytes, at } });

describe('documents projector', () => {
  it('keeps one row per collection with its totals, and the documents in a collection of their own', async () => {
    await projectionSpec([documentsProjector])
      .given([
        created,
        inserted('a', { age: 30 }, 1, 10),
        inserted('b', { age: 40 }, 2, 20),
        on({ type: 'DocumentUpdated', data: { documentId: 'a', document: { age: 31 }, size: 10, update: '{"$inc":{"age":1}}', previousRevision: 1, count: 2, bytes: 20, at: later } }),
        on({ type: 'DocumentDeleted', data: { documentId: 'b', previousRevision: 2, count: 1, bytes: 10, at: later } }),
      ])
      .then(async (store) => {
        const [meta] = await store.collection(COLLECTIONS_META).find({});
        expect(meta).to.deep.include({
          _id: 'c1', name: 'People', nameLower: 'people', ownerId: 'u1', orgId: null, workspaceId: null, schema: null,
          indexes: JSON.stringify([{ keys: { age: 1 } }]), count: 1, bytes: 10, createdAt: at, updatedAt: later, version: 4,
        });
        const docs = await store.collection(physicalCollection('c1')).find({}, { sort: { _id: 1 } });
        expect(docs).to.deep.equal([{ _id: 'a', r: 3, d: { age: 31 } }]);
      });
  });

  it('forgets a deleted collection and its documents', async () => {
    await projectionSpec([documentsProjector])
      .given([created, inserted('a', { age: 30 }, 1, 10), on({ type: 'CollectionDeleted', data: { name: 'People', documents: 1, at: later } })])
      .then(async (store) => {
        expect(await store.collection(COLLECTIONS_META).count()).to.equal(0);
        expect(await store.collection(physicalCollection('c1')).count()).to.equal(0);
      });
  });

  it('re-inserts a document id used before, after its deletion', async () => {
    await projectionSpec([documentsProjector])
      .given([
        created,
        inserted('a', { v: 1 }, 1, 7),
        on({ type: 'DocumentDeleted', data: { documentId: 'a', previousRevision: 1, count: 0, bytes: 0, at } }),
        on({ type: 'DocumentInserted', data: { documentId: 'a', document: { v: 2 }, size: 7, previousRevision: 2, count: 1, bytes: 7, at } }),
      ])
      .thenDocuments(physicalCollection('c1'), [{ _id: 'a', r: 3, d: { v: 2 } }]);
  });
});

describe('documents projector: per-document streams', () => {
  const onDoc = (documentId: string, event: DocumentStreamEvent): GivenEvent => ({ streamId: `document-c1.${documentId}`, event });
  const ref = (documentId: string, revision: number, legacyRevision: number | null = null) => ({ collectionId: 'c1', documentId, revision, legacyRevision, at: later });

  it('projects document streams next to collection-stream documents, totals by increments', async () => {
    await projectionSpec([documentsProjector])
      .given([
        created,
        inserted('old', { age: 30 }, 1, 10),
        onDoc('a', { type: 'DocumentAdded', data: { ...ref('a', 0), document: { age: 40 }, size: 10 } }),
        onDoc('old', { type: 'DocumentChanged', data: { ...ref('old', 2, 1), document: { age: 31, x: 1 }, size: 16, previousSize: 10, update: null } }),
        onDoc('a', { type: 'DocumentRemoved', data: { ...ref('a', 1), previousSize: 10, legacyLife: false } }),
        onDoc('b', { type: 'DocumentAdded', data: { ...ref('b', 0), document: { age: 50 }, size: 10 } }),
      ])
      .then(async (store) => {
        const [meta] = await store.collection(COLLECTIONS_META).find({});
        expect(meta).to.deep.include({ _id: 'c1', count: 2, bytes: 26, updatedAt: later });
        const docs = await store.collection(physicalCollection('c1')).find({}, { sort: { _id: 1 } });
        expect(docs).to.deep.equal([{ _id: 'b', r: 0, d: { age: 50 } }, { _id: 'old', r: 2, d: { age: 31, x: 1 } }]);
      });
  });

  it('drops a write that reaches a deleted collection', async () => {
    await projectionSpec([documentsProjector])
      .given([
        created,
        on({ type: 'CollectionDeleted', data: { name: 'People', documents: 0, at: later } }),
        onDoc('late', { type: 'DocumentAdded', data: { ...ref('late', 0), document: { v: 1 }, size: 7 } }),
      ])
      .then(async (store) => {
        expect(await store.collection(COLLECTIONS_META).count()).to.equal(0);
        expect(await store.collection(physicalCollection('c1')).count()).to.equal(0);
      });
  });
});
