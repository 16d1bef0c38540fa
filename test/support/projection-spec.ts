import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { DomainEvent, RecordedEvent } from '../../domain/shared/events.js';
import type { Doc, ReadStore } from '../../ports/read-store.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { MongoReadStore } from '../../infra/read-store/mongo.js';
import type { Projector } from '../../projections/projector.js';

/** An event as a test writes it: the stream it belongs to and its type and data. */
export interface GivenEvent {
  streamId: string;
  event: DomainEvent;
  occurredAt?: string;
  actorId?: string | null;
  orgId?: string | null;
  workspaceId?: string | null;
}

export type ReadStoreFactory = { name: string; open(): Promise<ReadStore> };

/** The read stores a projection specification runs on: in memory always, MongoDB-wire when `MONGODB_URL` is set. */
export function readStoreAdapters(): ReadStoreFactory[] {
  const adapters: ReadStoreFactory[] = [{ name: 'memory', open: async () => new MemoryReadStore() }];
  const url = process.env.MONGODB_URL;
  if (url) {
    adapters.push({
      name: 'mongo',
      open: async () => {
        // Each specification gets its own collection prefix, and drops what it wrote afterwards.
        const prefix = `spec${randomBytes(5).toString('hex')}_`;
        const store = await MongoReadStore.connect(url, process.env.MONGODB_SPEC_DB ?? 'projection_specs', { prefix });
        const close = store.close.bind(store);
        return Object.assign(store, {
          close: async () => {
            for (const name of await store.listCollections()) await store.collection(name).drop().catch(() => undefined);
            await close();
          },
        });
      },
    });
  } else if (process.env.REQUIRE_SERVERS === 'true') {
    throw new Error('MONGODB_URL is required when REQUIRE_SERVERS=true');
  } else {
    console.log('SKIP projection specifications on MongoDB: MONGODB_URL is not set');
  }
  return adapters;
}

/** Records events as the event store would: revisions per stream, one global position, metadata. */
export function recordAll(events: GivenEvent[], startPosition = 0): RecordedEvent[] {
  const revisions = new Map<string, number>();
  return events.map((g, i) => {
    const revision = revisions.get(g.streamId) ?? 0;
    revisions.set(g.streamId, revision + 1);
    const position = startPosition + i + 1;
    return {
      id: `spec-${position}`, type: g.event.type, streamId: g.streamId, revision, position, schemaVersion: 1, data: g.event.data,
      metadata: {
        actorId: g.actorId ?? null, orgId: g.orgId ?? null, workspaceId: g.workspaceId ?? null,
        correlationId: `c${position}`, causationId: null, requestId: null, occurredAt: g.occurredAt ?? '2026-01-01T00:00:00.000Z',
      },
    } as RecordedEvent;
  });
}

const categoryOf = (streamId: string) => streamId.slice(0, streamId.indexOf('-') === -1 ? streamId.length : streamId.indexOf('-'));

/** Projects recorded events through the projectors that read their category, in order. */
export async function projectAll(projectors: Projector[], store: ReadStore, events: RecordedEvent[]): Promise<void> {
  for (const e of events) for (const p of projectors) if (p.categories.includes(categoryOf(e.streamId))) await p.project(e, store);
}

/**
 * The projection specification, run on every read-store adapter:
 * `projectionSpec(projectors).given(events).then(collection, documents)`; documents are compared
 * as subsets (fields a test names must match; `_id` order is the collection's sorted order).
 * It also delivers the whole log a second time and expects the same documents (idempotence).
 */
/**
 * On every read store: projects `batches` event by event into one store and batch by batch
 * (`projectBatch`) into another, then hands both to `check`, which compares them.
 */
export async function projectOneByOneAndBatched(
  projector: Projector,
  batches: RecordedEvent[][],
  check: (stores: { adapter: string; oneByOne: ReadStore; batched: ReadStore }) => Promise<void>,
): Promise<void> {
  if (!projector.projectBatch) throw new Error(`${projector.name} has no projectBatch`);
  for (const adapter of readStoreAdapters()) {
    const [oneByOne, batched] = [await adapter.open(), await adapter.open()];
    try {
      await projector.setup(oneByOne);
      await projector.setup(batched);
      for (const e of batches.flat()) await projector.project(e, oneByOne);
      for (const batch of batches) await projector.projectBatch(batch, batched);
      await check({ adapter: adapter.name, oneByOne, batched });
    } finally {
      await oneByOne.close();
      await batched.close();
    }
  }
}

export function projectionSpec(projectors: Projector[]) {
  return {
    given(events: GivenEvent[]) {
      const recorded = recordAll(events);
      return {
        /** Runs `check` against the read model on each adapter, after projecting once and again after a redelivery. */
        async then(check: (store: ReadStore) => Promise<void>): Promise<void> {
          for (const adapter of readStoreAdapters()) {
            const store = await adapter.open();
            try {
              for (const p of projectors) await p.setup(store);
              await projectAll(projectors, store, recorded);
              await check(store).catch((err: Error) => { err.message = `[${adapter.name}] ${err.message}`; throw err; });
              await projectAll(projectors, store, recorded);
              await check(store).catch((err: Error) => { err.message = `[${adapter.name}, redelivered] ${err.message}`; throw err; });
            } finally {
              await store.close();
            }
          }
        },
        /** The documents of `collection`, sorted by `_id`, each containing the expected fields. */
        async thenDocuments(collection: string, expected: Array<Record<string, unknown>>): Promise<void> {
          await this.then(async (store) => {
            const docs = await store.collection<Doc>(collection).find({}, { sort: { _id: 1 }, limit: 10_000 });
            expect(docs.length, `${collection} has ${expected.length} documents`).to.equal(expected.length);
            expected.forEach((fields, i) => expect(docs[i], `${collection}[${i}]`).to.deep.include(fields));
          });
        },
      };
    },
  };
}
