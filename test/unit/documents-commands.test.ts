import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createCollection, deleteCollection, deleteDocument, collectionStreamId, documentStreamId, insertDocument, updateDocument } from '../../commands/documents.js';
import { handleCommand, type CommandContext } from '../../commands/handle.js';
import { collectionDecider, checkSchema, type CollectionScope } from '../../domain/documents/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';

const context = (): CommandContext => ({ actorId: 'u1', orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() });
const me: CollectionScope = { userId: 'u1', orgId: null, workspaceId: null };
const create = (store: SqliteEventStore, name: string, collectionId = randomUUID()) =>
  createCollection(store, context(), me, { collectionId, name, schema: null, indexes: [] }).then(() => collectionId);

/** What a command settled with: the code of its DomainError, or 'no error'. */
const code = (p: Promise<unknown>): Promise<string> =>
  p.then(() => 'no error', (err) => (err instanceof DomainError ? err.code : `not a DomainError: ${err}`));

describe('documents commands: collection names', () => {
  it('keeps a name taken while its collection lives, frees it on delete', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'People');
    expect(await code(create(store, 'people'))).to.equal('COLLECTION_NAME_TAKEN');
    await deleteCollection(store, context(), me, id);
    const again = await create(store, 'PEOPLE');
    expect(again).to.not.equal(id);
  });

  it('recovers a name left reserved by a process that stopped between CollectionDeleted and the release', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'orders');
    // What deleteCollection does before it releases the name, and nothing after (the crash).
    await handleCommand(store, {
      streamId: collectionStreamId(id), decider: collectionDecider,
      command: { type: 'DeleteCollection', scope: me, at: new Date().toISOString() }, context: context(),
    });
    const fresh = await create(store, 'orders');
    expect(fresh).to.not.equal(id);
    expect(await code(create(store, 'orders'))).to.equal('COLLECTION_NAME_TAKEN');
    // The old collection stays deleted; its history is in the log.
    const events = await store.readStream(collectionStreamId(id));
    expect(events.map((e) => e.type)).to.deep.equal(['CollectionCreated', 'CollectionDeleted']);
  });
});

describe('documents schema: pattern screening', () => {
  const schemaWith = (pattern: string) => ({ type: 'object', properties: { a: { type: 'string', pattern } } });
  for (const bad of ['^(a+)+$', '((a+))+', '((x*)y)*', '(?:x+){2}', '(\\w)\\1', '(?=a)b']) {
    it(`refuses the schema pattern ${bad}`, () => {
      expect(() => checkSchema(schemaWith(bad)))
        .to.throw(DomainError)
        .with.property('code', 'INVALID_SCHEMA');
      expect(() => checkSchema(schemaWith(bad)))
        .to.throw(DomainError)
        .with.property('details')
        .that.includes({ path: 'body.schema.properties.a.pattern' });
    });
  }
  it('accepts ordinary patterns', () => {
    for (const ok of ['^[^@]+@[^@]+$', '^\\d{3}-\\d{4}$', '(ab)+', '^(foo|bar)?x*$', '[(a+)]+']) checkSchema(schemaWith(ok));
  });
});

describe('documents commands: per-document streams', () => {
  const limits = { maxBytes: 1024, maxDepth: 8, maxDocuments: 3 };
  it('keeps the document limit exactly under concurrent inserts, and frees a slot on delete', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'capped');
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => code(insertDocument(store, context(), me, id, { documentId: `d${i}`, document: { i } }, limits))));
    expect(outcomes.filter((c) => c === 'no error')).to.have.length(3);
    expect(outcomes.filter((c) => c === 'COLLECTION_FULL')).to.have.length(5);
    const inserted = outcomes.map((c, i) => (c === 'no error' ? `d${i}` : null)).filter((d): d is string => d !== null);
    await deleteDocument(store, context(), me, id, inserted[0]);
    expect(await code(insertDocument(store, context(), me, id, { documentId: 'late', document: {} }, limits))).to.equal('no error');
    expect(await code(insertDocument(store, context(), me, id, { documentId: 'later', document: {} }, limits))).to.equal('COLLECTION_FULL');
  });

  it('lets one of two concurrent inserts of the same id win, and counts it once', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'same');
    const outcomes = await Promise.all([0, 1, 2, 3].map(() => code(insertDocument(store, context(), me, id, { documentId: 'x', document: {} }, limits))));
    expect(outcomes.sort()).to.deep.equal(['DOCUMENT_EXISTS', 'DOCUMENT_EXISTS', 'DOCUMENT_EXISTS', 'no error']);
    for (const d of ['y', 'z']) expect(await code(insertDocument(store, context(), me, id, { documentId: d, document: {} }, limits))).to.equal('no error');
    expect((await store.readStream(documentStreamId(id, 'x'))).map((e) => e.type)).to.deep.equal(['DocumentAdded']);
  });

  it('stops writes once the collection is deleted', async () => {
    const store = new SqliteEventStore(':memory:');
    const id = await create(store, 'gone');
    await insertDocument(store, context(), me, id, { documentId: 'a', document: {} }, limits);
    const deleted = await deleteCollection(store, context(), me, id);
    expect(deleted.events[0]).to.deep.include({ type: 'CollectionDeleted' });
    expect((deleted.events[0].data as { documents: number }).documents).to.equal(1);
    expect(await code(insertDocument(store, context(), me, id, { documentId: 'b', document: {} }, limits))).to.equal('COLLECTION_NOT_FOUND');
    expect(await code(updateDocument(store, context(), me, id, 'a', { document: { v: 1 } }, limits))).to.equal('COLLECTION_NOT_FOUND');
    expect(await code(deleteDocument(store, context(), me, id, 'a'))).to.equal('COLLECTION_NOT_FOUND');
  });
});
