import { expect } from 'chai';
import {
  collectionDecider, PersistentMap, translateFilter, translateSort, checkProjection, checkDocument,
  type CollectionCommand, type CollectionScope, type DocumentEvent,
} from '../../domain/documents/index.js';
import { DomainError, fold } from '../../domain/shared/decider.js';

const at = '2026-01-01T00:00:00.000Z';
const me: CollectionScope = { userId: 'u1', orgId: null, workspaceId: null };
const given = (events: DocumentEvent[]) => fold(collectionDecider.evolve, collectionDecider.initialState, events);
const when = (events: DocumentEvent[], command: CollectionCommand) => collectionDecider.decide(command, given(events));
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

function rejected(fn: () => unknown, code: string): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code).to.equal(code);
    return err as DomainError;
  }
  return expect.fail(`expected ${code}`);
}

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
    const [e] = when([created], insert('a', { x: 1 }));
    expect(e).to.deep.equal(inserted('a', { x: 1 }, 1, 7));
    rejected(() => when([created, e], insert('a', { x: 2 })), 'DOCUMENT_EXISTS');
    const full = [created, inserted('a', {}, 1, 2), inserted('b', {}, 2, 4), inserted('c', {}, 3, 6)];
    rejected(() => when(full, insert('d', {})), 'COLLECTION_FULL');
  });

  it('keeps deleted ids as tombstones so a re-insert continues the history chain', () => {
    const history = [created, inserted('a', { x: 1 }, 1, 7)];
    const [deleted] = when(history, { type: 'DeleteDocument', documentId: 'a', scope: me, at });
    expect(deleted).to.deep.include({ type: 'DocumentDeleted' });
    expect(deleted.data).to.deep.include({ previousRevision: 1, count: 0, bytes: 0 });
    const [again] = when([...history, deleted], insert('a', { y: 2 }));
    expect(again.data).to.deep.include({ previousRevision: 2, count: 1 });
    rejected(() => when([...history, deleted], { type: 'DeleteDocument', documentId: 'a', scope: me, at }), 'DOCUMENT_NOT_FOUND');
  });

  it('refuses an update based on a revision the document has moved past', () => {
    const history = [created, inserted('a', { x: 1 }, 1, 7)];
    const update = (basedOn: number): CollectionCommand => ({ type: 'UpdateDocument', documentId: 'a', document: { x: 2 }, bytes: 7, update: null, basedOn, scope: me, at });
    expect(when(history, update(1))[0].data).to.deep.include({ previousRevision: 1, bytes: 7 });
    rejected(() => when(history, update(0)), 'DOCUMENT_MOVED');
  });

  it('enforces the schema on inserts and updates', () => {
    const withSchema: DocumentEvent = { ...created, data: { ...created.data, schema: JSON.stringify({ type: 'object', properties: { n: { type: 'integer' } } }) } } as DocumentEvent;
    const err = rejected(() => when([withSchema], insert('a', { n: 'x' })), 'SCHEMA_VIOLATION');
    expect((err.details as { path: string }).path).to.equal('document.n');
  });

  it("answers 404 for another tenant's collection and for a deleted one", () => {
    rejected(() => when([created], insert('a', {}, { userId: 'u2', orgId: null, workspaceId: null })), 'COLLECTION_NOT_FOUND');
    rejected(() => when([created], insert('a', {}, { userId: 'u1', orgId: 'o1', workspaceId: 'w1' })), 'COLLECTION_NOT_FOUND');
    const gone: DocumentEvent = { type: 'CollectionDeleted', data: { name: 'people', documents: 0, at } };
    rejected(() => when([created, gone], insert('a', {})), 'COLLECTION_NOT_FOUND');
  });

  it('folds 100,000 inserts in linear time', () => {
    const events: DocumentEvent[] = [created];
    for (let i = 0; i < 100_000; i++) events.push(inserted(`d${i}`, { i }, i + 1, i));
    const started = performance.now();
    const state = given(events);
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
      rejected(() => translateFilter(filter, limits), code);
    }
    rejected(() => checkProjection({ a: 1, b: 0 }, 5), 'INVALID_PROJECTION');
    rejected(() => checkProjection({ a: { $slice: 1 } }, 5), 'INVALID_PROJECTION');
    expect(checkProjection({ _id: 0, a: 1 }, 5)).to.deep.equal({ _id: 0, a: 1 });
  });

  it('checks document keys, nesting and size', () => {
    const limits = { maxBytes: 50, maxDepth: 3 };
    expect(checkDocument({ a: [1, { b: 2 }] }, limits)).to.equal(JSON.stringify({ a: [1, { b: 2 }] }).length);
    rejected(() => checkDocument({ a: { b: { c: { d: 1 } } } }, limits), 'INVALID_DOCUMENT');
    rejected(() => checkDocument({ a: 'x'.repeat(60) }, limits), 'DOCUMENT_TOO_LARGE');
    rejected(() => checkDocument([1] as never, limits), 'INVALID_DOCUMENT');
  });
});
