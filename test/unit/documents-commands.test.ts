import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createCollection, deleteCollection, collectionStreamId } from '../../commands/documents.js';
import { handleCommand, type CommandContext } from '../../commands/handle.js';
import { collectionDecider, checkSchema, type CollectionScope } from '../../domain/documents/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';

const context = (): CommandContext => ({ actorId: 'u1', orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() });
const me: CollectionScope = { userId: 'u1', orgId: null, workspaceId: null };
const create = (store: SqliteEventStore, name: string, collectionId = randomUUID()) =>
  createCollection(store, context(), me, { collectionId, name, schema: null, indexes: [] }).then(() => collectionId);

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return (err as DomainError).code;
  }
  return 'no error';
}

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
      try {
        checkSchema(schemaWith(bad));
        expect.fail('accepted');
      } catch (err) {
        expect((err as DomainError).code).to.equal('INVALID_SCHEMA');
        expect((err as DomainError).details).to.include({ path: 'body.schema.properties.a.pattern' });
      }
    });
  }
  it('accepts ordinary patterns', () => {
    for (const ok of ['^[^@]+@[^@]+$', '^\\d{3}-\\d{4}$', '(ab)+', '^(foo|bar)?x*$', '[(a+)]+']) checkSchema(schemaWith(ok));
  });
});
