import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { metadataOf } from '../../commands/handle.js';
import { slotStreamId } from '../../domain/documents/index.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { EventStore } from '../../ports/event-store.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const WRITERS = 8;
/** Deletions and re-creations: at least this many, then until a write landed after a deletion or the storm's time ran out. */
const MIN_ROUNDS = 4;
const STORM_MS = 60_000;
const CLAIM_TTL_MS = 300;

/** Where each collection was deleted, and each document's DocumentAdded, from the log. */
async function racesOf(store: EventStore) {
  const deletedAt = new Map<string, number>();
  const added = new Map<string, RecordedEvent>();
  for (const e of await logOf(store, ['collection', 'document'])) {
    if (e.type === 'CollectionDeleted') deletedAt.set(e.streamId.slice('collection-'.length), e.position);
    if (e.type === 'DocumentAdded') added.set((e.data as { documentId: string }).documentId, e);
  }
  const collectionOf = (e: RecordedEvent) => (e.data as { collectionId: string }).collectionId;
  const late = [...added.values()].filter((e) => (deletedAt.get(collectionOf(e)) ?? Infinity) < e.position).length;
  return { deletedAt, added, collectionOf, late };
}

/** Every event of the categories, in log order. */
async function logOf(store: EventStore, categories: string[]): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for (let after = 0; ; ) {
    const page = await store.readAll({ after, maxCount: 1000, categories });
    if (page.length === 0) return all;
    all.push(...page);
    after = page[page.length - 1].position;
  }
}

for (const mode of availableModes()) {
  describe(`Document database: writes racing their collection's deletion (${mode})`, function () {
    this.timeout(180_000);
    let svc: TestService;
    let owner: RegisteredUser;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());
    const api = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, owner.auth);

    it('acknowledges a write only when it is readable afterwards or its collection was deleted after it', async () => {
      expect((await api('POST', '/db/collections', { name: 'race' })).status).to.equal(201);
      const outcomes: Array<{ id: string; status: number; text: string }> = [];
      let stop = false;
      // Writers insert while the collection is deleted and re-created under the same name.
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        for (let n = 0; !stop; n++) {
          const id = `w${w}-${n}`;
          const res = await api('POST', '/db/collections/race/documents', { id, document: { w, n } });
          outcomes.push({ id, status: res.status, text: res.text });
        }
      });
      // Storm until the race happened: some write's event landed after its collection's deletion.
      const stormEnds = Date.now() + STORM_MS;
      for (let round = 0; round < MIN_ROUNDS || Date.now() < stormEnds; round++) {
        await new Promise((r) => setTimeout(r, 20));
        expect((await api('DELETE', '/db/collections/race')).status).to.equal(200);
        expect((await api('POST', '/db/collections', { name: 'race' })).status).to.equal(201);
        if (round + 1 >= MIN_ROUNDS && (await racesOf(svc.services.eventStore)).late > 0) break;
      }
      stop = true;
      await Promise.all(writers);

      const { deletedAt, added, collectionOf, late } = await racesOf(svc.services.eventStore);
      // The race is timing: on a loaded machine a minute of storm may not produce it. The rules below
      // still hold; the decision itself is exercised deterministically in test/unit/documents-races.test.ts.
      if (late === 0) console.log(`NOTE documents race (${mode}): no write landed after a deletion in ${STORM_MS / 1000} s; checked the acknowledged writes only`);
      const liveId = (await api('GET', '/db/collections/race')).body.collection.id as string;
      let voided = 0;
      for (const { id, status, text } of outcomes) {
        expect(status, `${id}: ${text}`).to.be.oneOf([201, 404]);
        const event = added.get(id);
        const collectionId = event && collectionOf(event);
        const deleted = collectionId === undefined ? undefined : deletedAt.get(collectionId);
        if (status === 201) {
          expect(event, `${id} acknowledged without its event`).to.not.equal(undefined);
          // Acknowledged: readable in its collection, which lives, or was deleted after it.
          if (deleted !== undefined) expect(deleted, `${id} acknowledged after its collection's deletion`).to.be.above(event!.position);
          else {
            expect(collectionId).to.equal(liveId);
            expect((await api('GET', `/db/collections/race/documents/${id}`)).status, `${id} acknowledged, not readable`).to.equal(200);
          }
        } else if (event) {
          // Refused, yet in the log: a void write after the deletion, which no read model shows.
          expect(status, `${id}: ${text}`).to.equal(404);
          expect(deleted, `${id} refused although its collection was not deleted before it`).to.be.below(event.position);
          voided++;
        }
        if (status !== 201) expect((await api('GET', `/db/collections/race/documents/${id}`)).status, id).to.equal(404);
      }
      console.log(`      ${outcomes.length} writes: ${outcomes.filter((o) => o.status === 201).length} acknowledged, ${voided} void after a deletion`);
      expect(outcomes.filter((o) => o.status === 201).length).to.be.greaterThan(0);
      // The live collection counts exactly what it shows.
      const live = await api('GET', '/db/collections/race');
      const page = await api('POST', '/db/collections/race/search', { filter: {}, limit: 1000 });
      expect(live.body.collection.documentCount).to.equal(page.body.items.length);
    });

  });

  describe(`Document database: a slot claim left by a crash (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', DOCUMENTS_MAX_PER_COLLECTION: '3', DOCUMENTS_CLAIM_TTL_MS: String(CLAIM_TTL_MS) });
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());
    const api = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, owner.auth);

    it('gives back, after the claim TTL, the slot of an insert whose process stopped between claim and write', async () => {
      const created = await api('POST', '/db/collections', { name: 'capped' });
      const collectionId = created.body.collection.id as string;
      for (const id of ['a', 'b']) expect((await api('POST', '/db/collections/capped/documents', { id, document: {} })).status).to.equal(201);
      // What an inserter leaves when it stops right after its claim: the claim, no document.
      const context = { actorId: owner.user.id, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() };
      await svc.services.eventStore.append(slotStreamId(collectionId), [
        { id: randomUUID(), type: 'DocumentSlotClaimed', data: { documentId: 'ghost', after: -1, base: 0, max: 3, at: Date.now() }, metadata: metadataOf(context) },
      ], 'any');
      const full = await api('POST', '/db/collections/capped/documents', { id: 'c', document: {} });
      expect(full.status, full.text).to.equal(409);
      expect(full.body.error.code).to.equal('COLLECTION_FULL');
      await new Promise((r) => setTimeout(r, CLAIM_TTL_MS + 50));
      const again = await api('POST', '/db/collections/capped/documents', { id: 'c', document: {} });
      expect(again.status, again.text).to.equal(201);
      // The count is the truth again: three documents, the limit.
      const over = await api('POST', '/db/collections/capped/documents', { id: 'd', document: {} });
      expect(over.status, over.text).to.equal(409);
      expect((await api('GET', '/db/collections/capped/documents/ghost')).status).to.equal(404);
      const deleted = await api('DELETE', '/db/collections/capped');
      expect(deleted.body.deletedDocuments).to.equal(3);
    });
  });
}
