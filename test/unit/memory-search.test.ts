import { expect } from 'chai';
import { indexTerms, rankMemories, tokenize } from '../../domain/memory/index.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { memoryProjector } from '../../projections/memory.js';
import { searchMemories } from '../../projections/memory-search.js';

/** The search path (per-process index, postings, in-process filters) against the plain scan of rank.ts. */
describe('memory search over the index', () => {
  const tenant = { userId: 'owner', orgId: null, workspaceId: null };
  const texts = [
    'Alice drinks black coffee every morning', 'Bob prefers green tea to coffee', 'Alice travels by train',
    'Travelling by plane bothers Bob', 'Coffee coffee coffee all day long', 'Chen is allergic to peanuts',
    'Peanut allergies run in the family', 'A long walk every morning', 'Bob likes strong coffee and long walks',
  ];
  let store: MemoryReadStore;
  let position = 0;
  const save = (i: number, text: string, userId: string, topic: string) =>
    memoryProjector.project(
      {
        id: `e${i}`, type: 'MemorySaved', streamId: `memory-m${i}`, revision: 0, position: ++position, schemaVersion: 1,
        data: { memoryId: `m${i}`, text, metadata: { topic }, subject: { userId, agentId: null, runId: null }, ownerId: 'owner', orgId: null, workspaceId: null, embedding: null, at: new Date(1_000_000 + i).toISOString(), by: 'owner', source: 'test' },
        metadata: { actorId: 'owner', orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: new Date().toISOString() },
      } as RecordedEvent,
      store,
    );
  before(async () => {
    store = new MemoryReadStore();
    await memoryProjector.setup(store);
    for (const [i, text] of texts.entries()) await save(i, text, i % 2 ? 'bob' : 'alice', i % 3 ? 'food' : 'travel');
  });

  const request = (query: string, extra: object = {}) => ({ tenant, scope: {}, query, limit: 10, maxCandidates: 1000, maxCached: 1000, lexicalWeight: 0.5, queryVector: null, ...extra });

  for (const query of ['coffee morning', 'travel', 'peanut allergy', 'long walks']) {
    it(`scores "${query}" exactly as the scan of rank.ts does`, async () => {
      const found = await searchMemories(store, request(query));
      const docs = texts.map((t, i) => ({ id: `m${i}`, tokens: indexTerms(tokenize(t)) })).reverse(); // newest first
      const expected = rankMemories([...new Set(indexTerms(tokenize(query)))], null, docs, { documentCount: docs.length }, 0.5);
      expect(found.hits.map((h) => [h.doc._id, h.score.toFixed(9)])).to.deep.equal(expected.map((r) => [r.id, r.score.toFixed(9)]));
    });
  }

  it('filters by scope and metadata before ranking, and sees a change made after the index was loaded', async () => {
    const bob = await searchMemories(store, request('coffee', { scope: { userId: 'bob' }, filters: { topic: { $in: ['food'] } } }));
    expect(bob.hits.map((h) => h.doc.text)).to.deep.equal(['Bob prefers green tea to coffee']);
    expect(bob.candidatesScanned).to.equal(3);
    await save(100, 'Bob now drinks coffee with oat milk', 'bob', 'food');
    const again = await searchMemories(store, request('coffee', { scope: { userId: 'bob' }, filters: { topic: 'food' } }));
    expect(again.hits.map((h) => h.doc.text)).to.include('Bob now drinks coffee with oat milk');
    expect((await searchMemories(store, { ...request('coffee'), tenant: { userId: 'someone', orgId: null, workspaceId: null } })).hits).to.deep.equal([]);
  });

  it('an update and a delete projected after the index was loaded are in the next search', async () => {
    const change = (type: string, revision: number, data: object) =>
      memoryProjector.project(
        {
          id: `c${revision}`, type, streamId: 'memory-m2', revision, position: ++position, schemaVersion: 1,
          data: { memoryId: 'm2', at: new Date(2_000_000 + revision).toISOString(), by: 'owner', source: 'test', ...data },
          metadata: { actorId: 'owner', orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: new Date().toISOString() },
        } as RecordedEvent,
        store,
      );
    expect((await searchMemories(store, request('train'))).hits.map((h) => h.doc._id)).to.deep.equal(['m2']);
    await change('MemoryUpdated', 1, { previousText: texts[2], text: 'Alice now travels by bicycle', previousMetadata: {}, metadata: { topic: 'travel' } });
    expect((await searchMemories(store, request('train'))).hits).to.deep.equal([]);
    const bicycle = await searchMemories(store, request('bicycle'));
    expect(bicycle.hits.map((h) => [h.doc._id, h.doc.text])).to.deep.equal([['m2', 'Alice now travels by bicycle']]);
    await change('MemoryDeleted', 2, { previousText: 'Alice now travels by bicycle', previousMetadata: {} });
    expect((await searchMemories(store, request('bicycle'))).hits).to.deep.equal([]);
  });
});
