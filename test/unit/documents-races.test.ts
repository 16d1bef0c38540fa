import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  claimSlot, createCollection, deleteCollection, deleteDocument, documentStreamId, insertDocument, liveDocuments, reconcileSlots, updateDocument,
} from '../../commands/documents.js';
import { documentHistory } from '../../commands/documents-history.js';
import { handleCommand, loadState, type CommandContext } from '../../commands/handle.js';
import {
  collectionDecider, collectionStreamId, decideDocument, documentDecider, dueClaims, evolveDocument, evolveSlots, initialDocumentState, initialSlotState, slotDecider, slotStreamId,
  type CollectionScope,
} from '../../domain/documents/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { EventStore } from '../../ports/event-store.js';
import { COLLECTIONS_META, documentsProjector, physicalCollection } from '../../projections/documents.js';
import { projectionSpec } from '../support/projection-spec.js';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const TTL = 60_000;
const context = (at = T0): CommandContext => ({ actorId: 'u1', orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date(at) });
const me: CollectionScope = { userId: 'u1', orgId: null, workspaceId: null };
const limits = (maxDocuments: number) => ({ maxBytes: 1024, maxDepth: 8, maxDocuments, claimTtlMs: TTL });
const create = (store: EventStore, name: string, collectionId = randomUUID()) =>
  createCollection(store, context(), me, { collectionId, name, schema: null, indexes: [] }).then(() => collectionId);
const code = (p: Promise<unknown>): Promise<string> =>
  p.then(() => 'no error', (err) => (err instanceof DomainError ? err.code : `not a DomainError: ${err}`));
const types = async (store: EventStore, streamId: string) => (await store.readStream(streamId)).map((e) => e.type);

/** The store, but the first append to a document stream lets `meanwhile` run just before it (the race). */
function racing(store: EventStore, meanwhile: () => Promise<unknown>): EventStore {
  let fired = false;
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'append') {
        return async (...args: Parameters<EventStore['append']>) => {
          if (!fired && args[0].startsWith('document-')) {
            fired = true;
            await meanwhile();
          }
          return target.append(...args);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('documents commands: a write racing its collection\'s deletion', () => {
  it('answers 404 to an insert whose event lands after CollectionDeleted, and keeps the void event in the log', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'race');
    const racy = racing(store, () => deleteCollection(store, context(), me, id));
    expect(await code(insertDocument(racy, context(), me, id, { documentId: 'a', document: { v: 1 } }, limits(10)))).to.equal('COLLECTION_NOT_FOUND');
    const [deleted] = await store.readStream(collectionStreamId(id), { direction: 'backwards', maxCount: 1 });
    const [added] = await store.readStream(documentStreamId(id, 'a'));
    expect(deleted.type).to.equal('CollectionDeleted');
    expect(added.type).to.equal('DocumentAdded');
    expect(added.position).to.be.greaterThan(deleted.position);
  });

  it('answers 404 to an update or a document delete that lands after CollectionDeleted', async () => {
    for (const write of ['update', 'delete'] as const) {
      const store = new SqliteEventStore(':memory:');
      const id = await create(store, 'race');
      await insertDocument(store, context(), me, id, { documentId: 'a', document: { v: 1 } }, limits(10));
      const racy = racing(store, () => deleteCollection(store, context(), me, id));
      const run = write === 'update' ? updateDocument(racy, context(), me, id, 'a', { update: { $set: { v: 2 } } }, limits(10)) : deleteDocument(racy, context(), me, id, 'a');
      expect(await code(run), write).to.equal('COLLECTION_NOT_FOUND');
    }
  });

  it('acknowledges a write whose event comes before the deletion (the collection was deleted after it)', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'race');
    const done = await insertDocument(store, context(), me, id, { documentId: 'a', document: {} }, limits(10));
    await deleteCollection(store, context(), me, id);
    const [deleted] = await store.readStream(collectionStreamId(id), { direction: 'backwards', maxCount: 1 });
    expect(done.position).to.be.below(deleted.position);
  });
});

describe('documents commands: slot claims left by a crash', () => {
  /** What an inserter that stopped between its claim and its write leaves: the claim only. */
  const crashedClaim = (store: EventStore, id: string, documentId: string, at = T0) => claimSlot(store, context(at), id, documentId, -1, 0, 1_000_000, TTL);

  it('keeps a claim within its TTL, then fences it, gives its slot back and refuses its late write', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'capped');
    await insertDocument(store, context(), me, id, { documentId: 'a', document: {} }, limits(2));
    await crashedClaim(store, id, 'ghost');
    // Within the TTL the claim may still be written: the collection counts it.
    expect(await code(insertDocument(store, context(T0 + 1000), me, id, { documentId: 'b', document: {} }, limits(2)))).to.equal('COLLECTION_FULL');
    // Past it, the full collection reconciles: the ghost's slot comes back.
    expect(await code(insertDocument(store, context(T0 + TTL + 1), me, id, { documentId: 'b', document: {} }, limits(2)))).to.equal('no error');
    expect(await types(store, documentStreamId(id, 'ghost'))).to.deep.equal(['DocumentInsertLapsed']);
    // The ghost's late write (expecting the stream as its claim saw it) is refused.
    const { state: collection } = await loadState(store, collectionStreamId(id), collectionDecider);
    const late = handleCommand(store, {
      streamId: documentStreamId(id, 'ghost'), decider: documentDecider, expectedRevision: -1, context: context(),
      command: { type: 'AddDocument', collectionId: id, documentId: 'ghost', collectionLive: true, schema: null, legacy: undefined, document: {}, bytes: 2, at: '' },
    });
    expect(await code(late)).to.equal('PRECONDITION_FAILED');
    // The count is the truth again: two documents.
    expect(await liveDocuments(store, collection, id)).to.equal(2);
    expect(await code(insertDocument(store, context(T0 + TTL + 2), me, id, { documentId: 'c', document: {} }, limits(2)))).to.equal('COLLECTION_FULL');
    // The fenced id can be inserted anew; the fence is not in its history.
    await deleteDocument(store, context(), me, id, 'a');
    const ghost = await insertDocument(store, context(T0 + TTL + 3), me, id, { documentId: 'ghost', document: { v: 1 } }, limits(2));
    expect(ghost.events[0].data.revision).to.equal(1);
    const history = await documentHistory(store, me, id, 'ghost', 10, null);
    expect(history.items.map((h) => [h.type, h.revision])).to.deep.equal([['inserted', 1]]);
    expect((await deleteCollection(store, context(), me, id)).events[0].data).to.include({ documents: 2 });
  });

  it('leaves a lapsed claim out of the count a collection deletion reports', async () => {
    for (const [at, documents] of [[T0 + 1000, 2], [T0 + TTL + 1, 1]] as const) {
      const store = new SqliteEventStore(':memory:');
      const id = await create(store, 'counted');
      await insertDocument(store, context(), me, id, { documentId: 'a', document: {} }, limits(10));
      await crashedClaim(store, id, 'ghost');
      expect((await deleteCollection(store, context(at), me, id, { claimTtlMs: TTL })).events[0].data, `at +${at - T0} ms`).to.include({ documents });
    }
  });

  it('never fences a claim whose insert landed, however old', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'kept');
    await insertDocument(store, context(), me, id, { documentId: 'a', document: {} }, limits(1));
    expect(await reconcileSlots(store, context(T0 + 10 * TTL), id, TTL)).to.equal(0);
    expect(await types(store, documentStreamId(id, 'a'))).to.deep.equal(['DocumentAdded']);
    expect(await code(insertDocument(store, context(T0 + 10 * TTL), me, id, { documentId: 'b', document: {} }, limits(1)))).to.equal('COLLECTION_FULL');
  });

  it('gives a crashed claim back every 256 claims, before the collection is full', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'busy');
    await crashedClaim(store, id, 'ghost');
    for (let i = 0; i < 255; i++) await insertDocument(store, context(T0 + TTL + 1), me, id, { documentId: `d${i}`, document: {} }, limits(1000));
    const { state } = await loadState(store, slotStreamId(id), slotDecider);
    expect(state.count).to.equal(255);
    expect(state.unchecked.size).to.be.below(256);
    expect((await store.readStream(slotStreamId(id))).filter((e) => e.type === 'DocumentSlotsReconciled')).to.have.length(1);
  });

  it('gives a claim back once when two reconciliations race', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'twice');
    await crashedClaim(store, id, 'ghost');
    await insertDocument(store, context(), me, id, { documentId: 'a', document: {} }, limits(10));
    const freed = await Promise.all([1, 2, 3].map(() => reconcileSlots(store, context(T0 + TTL + 1), id, TTL)));
    expect(freed.every((n) => n <= 1)).to.equal(true);
    const { state } = await loadState(store, slotStreamId(id), slotDecider);
    expect(state.count).to.equal(1);
    expect(await types(store, documentStreamId(id, 'ghost'))).to.deep.equal(['DocumentInsertLapsed']);
  });
});

describe('documents slots and fences: the pure parts', () => {
  const claimed = (documentId: string, after: number, at: number) => ({ type: 'DocumentSlotClaimed' as const, data: { documentId, after, base: 0, max: 2, at } });
  const reconciled = (through: number, lapsed: Array<{ documentId: string; after: number }>) => ({ type: 'DocumentSlotsReconciled' as const, data: { through, lapsed } });

  it('checks the oldest unchecked claims up to the first within the TTL, and gives a lapsed one back once', () => {
    let state = [claimed('a', -1, 0), claimed('b', -1, 5_000), claimed('c', -1, 100)].reduce(evolveSlots, initialSlotState);
    expect(state.count).to.equal(2); // c refused: full
    expect(dueClaims(state, 61_000, TTL, 100)).to.deep.equal({ claims: [{ documentId: 'a', after: -1 }], through: 0 });
    state = evolveSlots(state, reconciled(0, [{ documentId: 'a', after: -1 }]));
    state = evolveSlots(state, reconciled(0, [{ documentId: 'a', after: -1 }])); // a second reconciler's
    expect(state.count).to.equal(1);
    expect([...state.unchecked.entries()].map(([k]) => k)).to.deep.equal(['b']);
    // A claim of a later life is another claim: an old lapse does not give it back.
    state = evolveSlots(state, claimed('a', 0, 70_000));
    state = evolveSlots(state, reconciled(0, [{ documentId: 'a', after: -1 }]));
    expect(state.count).to.equal(2);
  });

  it('fences a claim only on the stream as the claim saw it, numbering it after a legacy history', () => {
    const lapse = { type: 'LapseInsert' as const, collectionId: 'c1', documentId: 'd', after: -1, legacy: { r: 7, b: 0, live: false }, at: 'now' };
    const [fence] = decideDocument(lapse, initialDocumentState);
    expect(fence).to.deep.equal({ type: 'DocumentInsertLapsed', data: { collectionId: 'c1', documentId: 'd', revision: 8, legacyRevision: 7, at: 'now' } });
    const after = evolveDocument(initialDocumentState, fence);
    expect(after).to.deep.include({ revision: 0, base: 8, live: false });
    expect(decideDocument(lapse, after)).to.deep.equal([]);
  });

  it('projects nothing for a fence', async () => {
    const at = '2026-01-01T00:00:00.000Z';
    await projectionSpec([documentsProjector])
      .given([
        { streamId: 'collection-c1', event: { type: 'CollectionCreated', data: { collectionId: 'c1', name: 'P', ownerId: 'u1', orgId: null, workspaceId: null, schema: null, indexes: [], createdAt: at } } },
        { streamId: 'document-c1.d', event: { type: 'DocumentInsertLapsed', data: { collectionId: 'c1', documentId: 'd', revision: 0, legacyRevision: null, at } } },
      ])
      .then(async (store) => {
        const [meta] = await store.collection(COLLECTIONS_META).find({});
        expect(meta).to.deep.include({ count: 0, bytes: 0 });
        expect(await store.collection(physicalCollection('c1')).count()).to.equal(0);
      });
  });
});
