import { expect } from 'chai';
import {
  collectionDecider, documentDecider, PersistentMap, translateFilter, translateSort, checkProjection, checkDocument, claimHolds, evolveSlots,
  initialSlotState, type CollectionCommand, type CollectionScope, type DocumentCommand, type DocumentEvent, type DocumentStreamEvent, type SlotEvent,
} from '../../domain/documents/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const me: CollectionScope = { userId: 'u1', orgId: null, workspaceId: null };
const spec = deciderSpec(collectionDecider);
const created: DocumentEvent = {
  type: 'CollectionCreated',
  data: { collectionId: 'c1', name: 'people', ownerId: 'u1', orgId: null, workspaceId: null, schema: null, indexes: [], createdAt: at },
};
const inserted = (documentId: string, document: Record<string, unknown>, count: number, bytes: number, previousRevision: number | null = null): DocumentEvent => ({
  type: 'DocumentInserted', data: { documentId, document, size: JSON.stringify(document).length, previousRevision, count, bytes, at },
});
const insert = (documentId: string, document: Record<string, unknown>, scope = me): CollectionCommand => ({
  type: 'InsertDocument', documentId, document, bytes: JSON.stringify(document).length, maxDocuments: 3, scope, at,
});

/** A pure rule's refusal: a DomainError with this code. */
const refuses = (fn: () => unknown, code: string) => expect(fn).to.throw(DomainError).with.property('code', code);

describe('documents: persistent map', () => {
  it('behaves like a Map and never changes an earlier version', () => {
    let map = PersistentMap.empty<number>();
    const model = new Map<string, number>();
    const versions: Array<[PersistentMap<number>, Map<string, number>]> = [];
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let i = 0; i < 5000; i++) {
      const key = `k${Math.floor(rnd() * 1500)}`;
      if (rnd() < 0.3) {
        map = map.delete(key);
        model.delete(key);
      } else {
        map = map.set(key, i);
        model.set(key, i);
      }
      if (i % 1000 === 0) versions.push([map, new Map(model)]);
    }
    expect(map.size).to.equal(model.size);
    for (const [k, v] of model) expect(map.get(k)).to.equal(v);
    for (const [old, snapshot] of versions) {
      expect(old.size).to.equal(snapshot.size);
      for (const [k, v] of snapshot) expect(old.get(k)).to.equal(v);
    }
  });
});

describe('documents: collection decider', () => {
  it('inserts once per id, counts documents and bytes, and caps the collection', () => {
    const [e] = spec.given([created]).when(insert('a', { x: 1 })).then([inserted('a', { x: 1 }, 1, 7)]);
    spec.given([created, e]).when(insert('a', { x: 2 })).thenThrows('DOCUMENT_EXISTS');
    const full = [created, inserted('a', {}, 1, 2), inserted('b', {}, 2, 4), inserted('c', {}, 3, 6)];
    spec.given(full).when(insert('d', {})).thenThrows('COLLECTION_FULL');
  });

  it('keeps deleted ids as tombstones so a re-insert continues the history chain', () => {
    const history = [created, inserted('a', { x: 1 }, 1, 7)];
    const [deleted] = spec.given(history).when({ type: 'DeleteDocument', documentId: 'a', scope: me, at }).events();
    expect(deleted).to.deep.include({ type: 'DocumentDeleted' });
    expect(deleted.data).to.deep.include({ previousRevision: 1, count: 0, bytes: 0 });
    const [again] = spec.given([...history, deleted]).when(insert('a', { y: 2 })).events();
    expect(again.data).to.deep.include({ previousRevision: 2, count: 1 });
    spec.given([...history, deleted]).when({ type: 'DeleteDocument', documentId: 'a', scope: me, at }).thenThrows('DOCUMENT_NOT_FOUND');
  });

  it('refuses an update based on a revision the document has moved past', () => {
    const history = [created, inserted('a', { x: 1 }, 1, 7)];
    const update = (basedOn: number): CollectionCommand => ({ type: 'UpdateDocument', documentId: 'a', document: { x: 2 }, bytes: 7, update: null, basedOn, scope: me, at });
    expect(spec.given(history).when(update(1)).events()[0].data).to.deep.include({ previousRevision: 1, bytes: 7 });
    spec.given(history).when(update(0)).thenThrows('DOCUMENT_MOVED');
  });

  it('enforces the schema on inserts and updates', () => {
    const withSchema: DocumentEvent = { ...created, data: { ...created.data, schema: JSON.stringify({ type: 'object', properties: { n: { type: 'integer' } } }) } } as DocumentEvent;
    const err = spec.given([withSchema]).when(insert('a', { n: 'x' })).thenThrows('SCHEMA_VIOLATION');
    expect((err.details as { path: string }).path).to.equal('document.n');
  });

  it("answers 404 for another tenant's collection and for a deleted one", () => {
    spec.given([created]).when(insert('a', {}, { userId: 'u2', orgId: null, workspaceId: null })).thenThrows('COLLECTION_NOT_FOUND', 'not_found');
    spec.given([created]).when(insert('a', {}, { userId: 'u1', orgId: 'o1', workspaceId: 'w1' })).thenThrows('COLLECTION_NOT_FOUND', 'not_found');
    const gone: DocumentEvent = { type: 'CollectionDeleted', data: { name: 'people', documents: 0, at } };
    spec.given([created, gone]).when(insert('a', {})).thenThrows('COLLECTION_NOT_FOUND', 'not_found');
  });

  it('folds 100,000 inserts in linear time', () => {
    const events: DocumentEvent[] = [created];
    for (let i = 0; i < 100_000; i++) events.push(inserted(`d${i}`, { i }, i + 1, i));
    const started = performance.now();
    const state = spec.stateOf(events);
    const ms = performance.now() - started;
    expect(state.count).to.equal(100_000);
    expect(state.docs.get('d99999')).to.deep.equal({ r: 100_000, b: JSON.stringify({ i: 99999 }).length, live: true });
    expect(ms, `fold took ${ms} ms`).to.be.below(3000);
  });
});

describe('documents: query translation', () => {
  const limits = { maxDepth: 3, maxNodes: 20, maxList: 5, maxRegexLength: 10 };
  it('moves every field under d. except _id, through logical operators', () => {
    expect(translateFilter({ a: 1, _id: 'x', $or: [{ 'b.c': { $gt: 2 } }, { c: { $exists: false } }] }, limits)).to.deep.equal({
      'd.a': 1, _id: 'x', $or: [{ 'd.b.c': { $gt: 2 } }, { 'd.c': { $exists: false } }],
    });
    expect(translateSort({ a: -1, _id: 1 }, 5)).to.deep.equal({ 'd.a': -1, _id: 1 });
  });

  it('rewrites $all into equalities, as MongoDB defines it', () => {
    expect(translateFilter({ t: { $all: ['a', 'b'] } }, limits)).to.deep.equal({ $and: [{ 'd.t': 'a' }, { 'd.t': 'b' }] });
  });

  it('refuses code, unknown operators, deep or large filters and bad regexes', () => {
    for (const [filter, code] of [
      [{ $where: '1' }, 'FORBIDDEN_OPERATOR'],
      [{ a: { $not: { $expr: 1 } } }, 'FORBIDDEN_OPERATOR'],
      [{ a: { $near: [0, 0] } }, 'UNSUPPORTED_OPERATOR'],
      [{ $and: [{ $and: [{ $and: [{ $and: [{ a: 1 }] }] }] }] }, 'FILTER_TOO_COMPLEX'],
      [{ a: { $in: [1, 2, 3, 4, 5, 6] } }, 'FILTER_TOO_COMPLEX'],
      [{ a: { $regex: 'x'.repeat(11) } }, 'INVALID_FILTER'],
      [{ a: { $regex: '(?=a)' } }, 'UNSUPPORTED_OPERATOR'],
      [{ a: { $regex: '[' } }, 'INVALID_FILTER'],
      [{ a: { $gt: null } }, 'INVALID_FILTER'],
      [{ '': 1 }, 'INVALID_FILTER'],
      [{ '_id.x': 1 }, 'INVALID_FILTER'],
    ] as Array<[Record<string, unknown>, string]>) {
      refuses(() => translateFilter(filter, limits), code);
    }
    refuses(() => checkProjection({ a: 1, b: 0 }, 5), 'INVALID_PROJECTION');
    refuses(() => checkProjection({ a: { $slice: 1 } }, 5), 'INVALID_PROJECTION');
    expect(checkProjection({ _id: 0, a: 1 }, 5)).to.deep.equal({ _id: 0, a: 1 });
  });

  it('checks document keys, nesting and size', () => {
    const limits = { maxBytes: 50, maxDepth: 3 };
    expect(checkDocument({ a: [1, { b: 2 }] }, limits)).to.equal(JSON.stringify({ a: [1, { b: 2 }] }).length);
    refuses(() => checkDocument({ a: { b: { c: { d: 1 } } } }, limits), 'INVALID_DOCUMENT');
    refuses(() => checkDocument({ a: 'x'.repeat(60) }, limits), 'DOCUMENT_TOO_LARGE');
    refuses(() => checkDocument([1] as never, limits), 'INVALID_DOCUMENT');
  });
});

describe('documents: document decider (one stream per document)', () => {
  const doc = deciderSpec(documentDecider);
  const base = { collectionId: 'c1', documentId: 'a', collectionLive: true, schema: null, legacy: undefined, at };
  const add = (extra: Partial<DocumentCommand> = {}): DocumentCommand => ({ type: 'AddDocument', ...base, document: { x: 1 }, bytes: 7, ...extra } as DocumentCommand);
  const added: DocumentStreamEvent = { type: 'DocumentAdded', data: { collectionId: 'c1', documentId: 'a', document: { x: 1 }, size: 7, revision: 0, legacyRevision: null, at } };

  it('adds once, changes based on the revision seen, removes, and adds again on the same stream', () => {
    doc.given([]).when(add()).then([added]);
    doc.given([added]).when(add()).thenThrows('DOCUMENT_EXISTS', 'conflict');
    const change = (basedOn: number): DocumentCommand => ({ type: 'ChangeDocument', ...base, document: { x: 2 }, bytes: 7, update: null, basedOn });
    const [changed] = doc.given([added]).when(change(0)).events();
    expect(changed.data).to.deep.include({ revision: 1, previousSize: 7, legacyRevision: null });
    doc.given([added, changed]).when(change(0)).thenThrows('DOCUMENT_MOVED', 'conflict');
    const [removed] = doc.given([added, changed]).when({ type: 'RemoveDocument', ...base }).events();
    expect(removed.data).to.deep.include({ revision: 2, previousSize: 7, legacyLife: false });
    doc.given([added, changed, removed]).when({ type: 'RemoveDocument', ...base }).thenThrows('DOCUMENT_NOT_FOUND', 'not_found');
    const [again] = doc.given([added, changed, removed]).when(add()).events();
    expect(again.data).to.deep.include({ revision: 3 });
  });

  it('continues a document written in the collection stream: its revisions, its liveness, its slot', () => {
    const legacy = { r: 5, b: 9, live: true };
    doc.given([]).when(add({ legacy })).thenThrows('DOCUMENT_EXISTS');
    const [changed] = doc.given([]).when({ type: 'ChangeDocument', ...base, legacy, document: { y: 1 }, bytes: 7, update: null, basedOn: 5 }).events();
    expect(changed.data).to.deep.include({ revision: 6, legacyRevision: 5, previousSize: 9 });
    const [removed] = doc.given([changed]).when({ type: 'RemoveDocument', ...base, legacy }).events();
    expect(removed.data).to.deep.include({ revision: 7, legacyRevision: null, legacyLife: true });
    // A tombstone in the collection stream: the id can be used again, after its old revisions.
    const [fresh] = doc.given([]).when(add({ legacy: { r: 5, b: 0, live: false } })).events();
    expect(fresh.data).to.deep.include({ revision: 6, legacyRevision: 5 });
  });

  it('refuses writes to a collection that is gone or not the caller\'s, and enforces the schema', () => {
    doc.given([]).when(add({ collectionLive: false })).thenThrows('COLLECTION_NOT_FOUND', 'not_found');
    const schema = JSON.stringify({ type: 'object', properties: { x: { type: 'string' } } });
    doc.given([]).when(add({ schema })).thenThrows('SCHEMA_VIOLATION', 'invalid');
  });
});

describe('documents: slots (the collection\'s document count)', () => {
  const claim = (documentId: string, after = -1, max = 2, b = 0): SlotEvent => ({ type: 'DocumentSlotClaimed', data: { documentId, after, base: b, max } });
  const release = (documentId: string, removedAt: number, legacyLife = false): SlotEvent => ({ type: 'DocumentSlotReleased', data: { documentId, removedAt, legacyLife } });
  const fold = (events: SlotEvent[]) => events.reduce(evolveSlots, initialSlotState);

  it('grants claims in stream order up to the limit, absorbs repeats, and frees on release', () => {
    const s = fold([claim('a'), claim('b'), claim('c'), claim('a')]);
    expect(s.count).to.equal(2);
    expect([claimHolds(s, 'a', -1), claimHolds(s, 'b', -1), claimHolds(s, 'c', -1)]).to.deep.equal([true, true, false]);
    const freed = fold([claim('a'), claim('b'), release('a', 1), claim('c')]);
    expect(claimHolds(freed, 'c', -1)).to.equal(true);
    expect(freed.count).to.equal(2);
  });

  it('moves a claim to a later life of the id, ignoring the earlier life\'s late release', () => {
    const s = fold([claim('a'), claim('a', 1), release('a', 1)]);
    expect(s.count).to.equal(1);
    expect(claimHolds(s, 'a', 1)).to.equal(true);
  });

  it('counts the documents of the collection stream as a base that removals lower', () => {
    expect(claimHolds(fold([claim('x', -1, 3, 3)]), 'x', -1)).to.equal(false);
    const s = fold([release('old', 0, true), claim('x', -1, 3, 3)]);
    expect(claimHolds(s, 'x', -1)).to.equal(true);
  });
});
