import { randomUUID } from 'node:crypto';
import { MAX_STORED_TOKENS, indexTerms, isMemoryVisibleTo, tokenize, type MemoryEvent, type MemoryMetadata, type MemoryTenant } from '../domain/memory/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { DuplicateKeyError, type Doc, type Filter, type Page, type ReadStore } from '../infra/ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

/**
 * Read models of the memory context:
 * - `memories`: one document per memory with its tenancy, subject fields, metadata (scalars only),
 *   the indexed terms the lexical ranking reads and, when a provider is configured, the embedding. A deleted memory
 *   stays as a tombstone (no text, no tokens) so its history stays reachable by its owner;
 * - `memory_history`: one entry per change (old and new text and metadata, when, by whom).
 */
export const MEMORIES = 'memories';
export const MEMORY_HISTORY = 'memory_history';
/** One document per tenant: a counter bumped on every change of its memories (see memory-index.ts). */
export const MEMORY_TENANTS = 'memory_tenants';

export interface MemoryTenantDoc extends Doc {
  generation: number;
  /** Set when the document is created: a rebuild (which drops it) never repeats an epoch. */
  epoch: string;
}

/** The tenant a memory belongs to, as one key: the organization's workspace, or the owner's personal space. */
export function tenantKeyOf(memory: { ownerId: string; orgId: string | null; workspaceId: string | null }): string {
  return memory.orgId === null ? `user:${memory.ownerId}` : `ws:${memory.orgId}:${memory.workspaceId ?? '-'}`;
}

export interface MemoryDoc extends Doc {
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  userId: string | null;
  agentId: string | null;
  runId: string | null;
  text: string;
  metadata: MemoryMetadata;
  /** The indexed terms, space-separated: one string, because FerretDB reads and writes arrays slowly. */
  tokens: string;
  /** The vector as base64 of little-endian float32: one string instead of a 1,536-item array (FerretDB stores arrays slowly). */
  embedding: string | null;
  embeddingModel: string | null;
  deleted: boolean;
  /**
   * The tenant's counter after this memory's last change (memory_tenants.generation), null between
   * the write and the stamp: a search index holding generation g refreshes with `stamp > g or null`.
   */
  stamp: number | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface MemoryHistoryEntry {
  action: 'saved' | 'updated' | 'deleted';
  previousText: string | null;
  text: string | null;
  previousMetadata: MemoryMetadata | null;
  metadata: MemoryMetadata | null;
  at: string;
  by: string | null;
  source: string;
}
export interface MemoryHistoryDoc extends Doc, MemoryHistoryEntry {
  memoryId: string;
  seq: number;
}

export function packVector(vector: number[] | undefined): string | null {
  if (!vector) return null;
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

export function unpackVector(packed: string | null): Float32Array | null {
  if (!packed) return null;
  const bytes = Buffer.from(packed, 'base64');
  // Copy into an aligned buffer: a Buffer's offset in Node's pool need not be a multiple of 4.
  return new Float32Array(new Uint8Array(bytes).buffer);
}

/** The indexed terms (tokens, then prefix terms) of a text; see domain/memory/text.ts. */
const tokensOf = (text: string) => indexTerms(tokenize(text).slice(0, MAX_STORED_TOKENS)).join(' ');

export const memoryProjector: Projector = {
  name: 'memory',
  categories: ['memory'],
  ...ownedCollections({
    [MEMORIES]: [{ keys: { orgId: 1, workspaceId: 1, ownerId: 1, deleted: 1, updatedAt: -1 } }, { keys: { orgId: 1, workspaceId: 1, ownerId: 1, stamp: 1 } }],
    [MEMORY_HISTORY]: [{ keys: { memoryId: 1, seq: 1 } }],
    [MEMORY_TENANTS]: [],
  }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & MemoryEvent;
    const memories = store.collection<MemoryDoc>(MEMORIES);
    const id = recorded.streamId.slice('memory-'.length);
    // Guarded by version so a redelivered event (at-least-once) changes nothing.
    const newer = { _id: id, version: { $lt: recorded.revision } };
    switch (event.type) {
      case 'MemorySaved': {
        const d = event.data;
        await memories.replaceOne(
          { _id: id },
          {
            _id: id, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, userId: d.subject.userId, agentId: d.subject.agentId, runId: d.subject.runId,
            text: d.text, metadata: d.metadata, tokens: tokensOf(d.text), embedding: packVector(d.embedding?.vector), embeddingModel: d.embedding?.model ?? null,
            deleted: false, stamp: null, version: recorded.revision, createdAt: d.at, updatedAt: d.at,
          },
          { upsert: true },
        );
        await stamp(store, id, d);
        await recordHistory(store, id, recorded.revision, { action: 'saved', previousText: null, text: d.text, previousMetadata: null, metadata: d.metadata, at: d.at, by: d.by, source: d.source });
        return;
      }
      case 'MemoryUpdated': {
        const d = event.data;
        const set: Record<string, unknown> = { text: d.text, metadata: d.metadata, tokens: tokensOf(d.text), stamp: null, version: recorded.revision, updatedAt: d.at };
        if (d.embedding !== undefined) Object.assign(set, { embedding: packVector(d.embedding?.vector), embeddingModel: d.embedding?.model ?? null });
        await memories.updateOne(newer, { $set: set });
        await stamp(store, id);
        await recordHistory(store, id, recorded.revision, { action: 'updated', previousText: d.previousText, text: d.text, previousMetadata: d.previousMetadata, metadata: d.metadata, at: d.at, by: d.by, source: d.source });
        return;
      }
      case 'MemoryDeleted': {
        const d = event.data;
        await memories.updateOne(newer, { $set: { deleted: true, text: '', metadata: {}, tokens: '', embedding: null, stamp: null, version: recorded.revision, updatedAt: d.at } });
        await stamp(store, id);
        await recordHistory(store, id, recorded.revision, { action: 'deleted', previousText: d.previousText, text: null, previousMetadata: d.previousMetadata, metadata: null, at: d.at, by: d.by, source: d.source });
        return;
      }
    }
  },
};

/**
 * Tells every process holding the tenant's search index that it is stale, in three steps, after
 * the memory was written with `stamp: null`: bump the tenant's counter, read it back, stamp the
 * memory with it. A process that read the counter before the bump sees a new counter next time
 * and fetches `stamp > its generation or stamp null`, which holds this memory whatever step it
 * is at; one that read it after the bump fetches after the write. A redelivered event bumps and
 * stamps again, which only costs one more fetch. Concurrent projections of one tenant may stamp
 * with a later value than their own bump, never an earlier one.
 */
async function stamp(store: ReadStore, memoryId: string, known?: { ownerId: string; orgId: string | null; workspaceId: string | null }) {
  const memories = store.collection<MemoryDoc>(MEMORIES);
  const tenant = known ?? (await memories.findOne({ _id: memoryId }, { projection: { ownerId: 1, orgId: 1, workspaceId: 1 } }));
  if (!tenant) return;
  const key = tenantKeyOf(tenant);
  const tenants = store.collection<MemoryTenantDoc>(MEMORY_TENANTS);
  const bump = () => tenants.updateOne({ _id: key }, { $inc: { generation: 1 }, $setOnInsert: { epoch: randomUUID() } }, { upsert: true });
  try {
    await bump();
  } catch (err) {
    // Two first changes of a tenant projected at once: MongoDB lets one upsert win; the other
    // now finds the document and increments it.
    if (!(err instanceof DuplicateKeyError)) throw err;
    await bump();
  }
  const counter = await tenants.findOne({ _id: key });
  await memories.updateOne({ _id: memoryId }, { $set: { stamp: counter!.generation } });
}

function recordHistory(store: ReadStore, memoryId: string, seq: number, entry: MemoryHistoryEntry) {
  return store.collection<MemoryHistoryDoc>(MEMORY_HISTORY).replaceOne({ _id: `${memoryId}:${seq}` }, { _id: `${memoryId}:${seq}`, memoryId, seq, ...entry }, { upsert: true });
}

export const memoryProjectors: Projector[] = [memoryProjector];

/** The tenant part of every memory query (the same rule as isMemoryVisibleTo). */
export function tenantFilter(tenant: MemoryTenant): Filter {
  const filter: Filter = { orgId: tenant.orgId, workspaceId: tenant.workspaceId };
  if (tenant.orgId === null) filter.ownerId = tenant.userId;
  return filter;
}

/** A memory the tenant can see, tombstones included when `includeDeleted`. */
export async function getMemory(store: ReadStore, memoryId: string, tenant: MemoryTenant, options: { includeDeleted?: boolean } = {}): Promise<MemoryDoc | null> {
  const doc = await store.collection<MemoryDoc>(MEMORIES).findOne({ _id: memoryId }, { projection: { embedding: 0, tokens: 0 } });
  if (!doc || !isMemoryVisibleTo(doc, tenant)) return null;
  if (doc.deleted && !options.includeDeleted) return null;
  return doc;
}

/** A memory's changes, oldest first. Does not check who asks: callers check getMemory first. */
export function listMemoryHistory(store: ReadStore, memoryId: string, options: { limit: number; cursor?: string | null }): Promise<Page<MemoryHistoryDoc>> {
  return store.collection<MemoryHistoryDoc>(MEMORY_HISTORY).page({ memoryId }, { sort: { seq: 1 }, limit: options.limit, cursor: options.cursor ?? null });
}

/** Ids of the live memories matching a filter built by the caller (tenant included), newest first. */
export async function memoryIdsMatching(store: ReadStore, filter: Filter, limit: number): Promise<string[]> {
  const docs = await store.collection<MemoryDoc>(MEMORIES).find({ ...filter, deleted: false }, { sort: { updatedAt: -1, _id: 1 }, limit, projection: { _id: 1 } });
  return docs.map((d) => d._id);
}
