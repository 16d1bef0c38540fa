import { expect } from 'chai';
import type { MemoryEvent } from '../../domain/memory/index.js';
import { MEMORIES, MEMORY_HISTORY, MEMORY_TENANTS, memoryProjector, unpackVector } from '../../projections/memory.js';
import type { ReadStore } from '../../ports/read-store.js';
import { projectOneByOneAndBatched, projectionSpec, recordAll, type GivenEvent } from '../support/projection-spec.js';

const t0 = '2026-01-01T00:00:00.000Z';
const t1 = '2026-01-02T00:00:00.000Z';
const t2 = '2026-01-03T00:00:00.000Z';
const author = { by: 'u1', source: 'api' };
const on = (event: MemoryEvent, streamId = 'memory-m1'): GivenEvent => ({ streamId, event });
const saved = (memoryId: string, text: string, owner = { ownerId: 'u1', orgId: null as string | null, workspaceId: null as string | null }) =>
  on({
    type: 'MemorySaved',
    data: { memoryId, text, metadata: { topic: 'food' }, subject: { userId: 'alice', agentId: null, runId: 'r1' }, ...owner, embedding: { model: 'm', vector: [0.5, -1] }, at: t0, ...author },
  }, `memory-${memoryId}`);

describe('memory projector', () => {
  it('keeps a memory with its subject, terms and vector, and its history of changes', async () => {
    await projectionSpec([memoryProjector])
      .given([
        saved('m1', 'Alice drinks coffee'),
        on({ type: 'MemoryUpdated', data: { memoryId: 'm1', previousText: 'Alice drinks coffee', text: 'Alice drinks tea', previousMetadata: { topic: 'food' }, metadata: { topic: 'drink' }, at: t1, ...author } }),
      ])
      .then(async (store) => {
        const memory = await store.collection(MEMORIES).findOne({ _id: 'm1' });
        expect(memory).to.deep.include({
          ownerId: 'u1', orgId: null, workspaceId: null, userId: 'alice', agentId: null, runId: 'r1',
          text: 'Alice drinks tea', metadata: { topic: 'drink' }, embeddingModel: 'm', deleted: false, version: 1, createdAt: t0, updatedAt: t1,
        });
        expect((memory!.tokens as string).split(' ')).to.include.members(['alic', 'drink', 'tea']);
        expect([...unpackVector(memory!.embedding as string)!]).to.deep.equal([0.5, -1]);
        expect(memory!.stamp, 'stamped with the tenant counter').to.be.a('number');
        const history = await store.collection(MEMORY_HISTORY).find({ memoryId: 'm1' }, { sort: { seq: 1 } });
        expect(history.map((h) => [h.action, h.previousText, h.text])).to.deep.equal([
          ['saved', null, 'Alice drinks coffee'],
          ['updated', 'Alice drinks coffee', 'Alice drinks tea'],
        ]);
      });
  });

  it('leaves a tombstone without text, terms or vector after a delete, history kept', async () => {
    await projectionSpec([memoryProjector])
      .given([
        saved('m1', 'Alice drinks coffee'),
        on({ type: 'MemoryDeleted', data: { memoryId: 'm1', previousText: 'Alice drinks coffee', previousMetadata: { topic: 'food' }, at: t2, ...author } }),
      ])
      .then(async (store) => {
        expect(await store.collection(MEMORIES).findOne({ _id: 'm1' })).to.deep.include({
          deleted: true, text: '', metadata: {}, tokens: '', embedding: null, version: 1, updatedAt: t2,
        });
        const history = await store.collection(MEMORY_HISTORY).find({ memoryId: 'm1' }, { sort: { seq: 1 } });
        expect(history.map((h) => h.action)).to.deep.equal(['saved', 'deleted']);
        expect(history[1]).to.deep.include({ previousText: 'Alice drinks coffee', text: null, metadata: null });
      });
  });

  it('counts changes per tenant: the personal space and an organization workspace apart', async () => {
    await projectionSpec([memoryProjector])
      .given([saved('m1', 'one'), saved('m2', 'two'), saved('m3', 'three', { ownerId: 'u1', orgId: 'o1', workspaceId: 'w1' })])
      .then(async (store) => {
        const tenants = await store.collection(MEMORY_TENANTS).find({}, { sort: { _id: 1 } });
        expect(tenants.map((t) => t._id)).to.deep.equal(['user:u1', 'ws:o1:w1']);
        for (const t of tenants) expect(t.epoch).to.be.a('string');
        const stamps = await store.collection(MEMORIES).find({}, { sort: { _id: 1 } });
        expect(stamps.map((m) => m.stamp === null)).to.deep.equal([false, false, false]);
      });
  });

  it('projects a batch (saves, an update, a delete, two tenants) as event by event, and again unchanged after a redelivery', async () => {
    const events = recordAll([
      saved('m1', 'Alice drinks coffee'),
      saved('m2', 'Bob reads books', { ownerId: 'u1', orgId: 'o1', workspaceId: 'w1' }),
      on({ type: 'MemoryUpdated', data: { memoryId: 'm1', previousText: 'Alice drinks coffee', text: 'Alice drinks tea', previousMetadata: { topic: 'food' }, metadata: { topic: 'drink' }, at: t1, ...author } }),
      saved('m3', 'Carol runs'),
      on({ type: 'MemoryDeleted', data: { memoryId: 'm3', previousText: 'Carol runs', previousMetadata: { topic: 'food' }, at: t2, ...author } }, 'memory-m3'),
    ]);
    const later = recordAll([on({ type: 'MemoryUpdated', data: { memoryId: 'm2', previousText: 'Bob reads books', text: 'Bob reads papers', previousMetadata: { topic: 'food' }, metadata: {}, at: t2, ...author } }, 'memory-m2')], 100);
    later[0].revision = 1;
    const snapshot = async (store: ReadStore) => {
      const strip = (docs: Array<Record<string, unknown>>) => docs.map(({ stamp, epoch, generation, ...rest }) => ({ ...rest, stamped: typeof stamp === 'number', hasEpoch: typeof epoch === 'string' }));
      return {
        memories: strip(await store.collection(MEMORIES).find({}, { sort: { _id: 1 } })),
        history: await store.collection(MEMORY_HISTORY).find({}, { sort: { _id: 1 } }),
        tenants: strip(await store.collection(MEMORY_TENANTS).find({}, { sort: { _id: 1 } })),
      };
    };
    await projectOneByOneAndBatched(memoryProjector, [events, later], async ({ adapter, oneByOne, batched }) => {
      const expected = await snapshot(oneByOne);
      expect(await snapshot(batched), adapter).to.deep.equal(expected);
      const generations = async () => (await batched.collection(MEMORY_TENANTS).find({}, { sort: { _id: 1 } })).map((t) => t.generation as number);
      const before = await generations();
      // Redelivered from an earlier checkpoint: the inserts find their documents, the idempotent path runs.
      await memoryProjector.projectBatch!([...events, ...later], batched);
      expect(await snapshot(batched), `${adapter}, redelivered`).to.deep.equal(expected);
      const after = await generations();
      after.forEach((g, i) => expect(g, 'a redelivery moves the counters on, so indexes refresh').to.be.greaterThan(before[i]));
      const m2 = await batched.collection(MEMORIES).findOne({ _id: 'm2' });
      expect(m2!.stamp, 'stamped with its tenant counter').to.equal(after[1]);
    });
  });
});
