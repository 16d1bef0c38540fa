import type { ReadStore } from '../ports/read-store.js';
import { MEMORIES, MEMORY_TENANTS, tenantFilter, tenantKeyOf, unpackVector, type MemoryDoc, type MemoryTenantDoc } from './memory.js';
import type { MemoryTenant } from '../domain/memory/index.js';

/**
 * A per-process cache of each tenant's live memories (tokens, subject fields, metadata, vectors),
 * so a search ranks in memory instead of scanning the store. It is only a cache of the read
 * store, which stays the truth: every search first reads the tenant's counter in
 * `memory_tenants` (one lookup by `_id`), which the projector bumps after each change. A cached
 * index of another generation fetches only the memories stamped since (`stamp > generation` or
 * not yet stamped, deleted ones included; see `stamp` in memory.ts for why nothing is missed) and
 * merges them; another epoch (the read model was rebuilt) reloads in full. So an API process
 * separate from the projector (distributed roles) sees every change the read store has.
 *
 * Bounds: at most `maxCandidates` memories per tenant are loaded (newest first; `truncated` says
 * so), and at most `maxCached` memories across tenants are kept (least recently used tenants are
 * dropped first). A tenant that changes between searches pays one small fetch and a rebuild of
 * its postings per search.
 */
export interface IndexedMemory {
  doc: MemoryDoc;
  /** The indexed terms (doc.tokens split). */
  tokens: string[];
  /** The stored vector, decoded once per load. */
  vector: Float32Array | null;
}

export interface TenantIndex {
  epoch: string;
  generation: number;
  /** Newest first. */
  memories: IndexedMemory[];
  truncated: boolean;
  /** Loaded with the vectors (hybrid ranking); a lexical-only index leaves them in the store. */
  withVectors: boolean;
  /** Term → positions in `memories`, once per occurrence (so a run of one position is its tf). Built on first use. */
  postings?: Map<string, number[]>;
}

/** The index's postings, built once per load (a pass over every token). */
export function postingsOf(index: TenantIndex): Map<string, number[]> {
  if (index.postings) return index.postings;
  const postings = new Map<string, number[]>();
  index.memories.forEach(({ tokens }, position) => {
    for (const token of tokens) {
      const list = postings.get(token);
      if (list) list.push(position);
      else postings.set(token, [position]);
    }
  });
  return (index.postings = postings);
}

interface Cache {
  entries: Map<string, TenantIndex>;
  size: number;
  loading: Map<string, Promise<TenantIndex>>;
}

// Keyed by the service's read store: services in one process (tests) share no index.
const caches = new WeakMap<ReadStore, Cache>();

function cacheOf(store: ReadStore): Cache {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = { entries: new Map(), size: 0, loading: new Map() }));
  return cache;
}

const indexed = ({ embedding, tokens, ...doc }: MemoryDoc, withVectors: boolean): IndexedMemory => ({
  doc: { ...doc, embedding: null, tokens: '' } as MemoryDoc,
  tokens: tokens === '' ? [] : tokens.split(' '),
  vector: withVectors ? unpackVector(embedding ?? null) : null,
});

/** Newest first, `_id` breaking ties: the order every adapter gives for the full load. */
const newestFirst = (a: IndexedMemory, b: IndexedMemory) =>
  a.doc.updatedAt < b.doc.updatedAt ? 1 : a.doc.updatedAt > b.doc.updatedAt ? -1 : a.doc._id < b.doc._id ? -1 : a.doc._id > b.doc._id ? 1 : 0;

async function load(store: ReadStore, tenant: MemoryTenant, epoch: string, generation: number, maxCandidates: number, withVectors: boolean): Promise<TenantIndex> {
  const docs = await store
    .collection<MemoryDoc>(MEMORIES)
    .find({ ...tenantFilter(tenant), deleted: false }, { sort: { updatedAt: -1, _id: 1 }, limit: maxCandidates + 1, ...(withVectors ? {} : { projection: { embedding: 0 } }) });
  const truncated = docs.length > maxCandidates;
  if (truncated) docs.pop();
  return { epoch, generation, memories: docs.map((d) => indexed(d, withVectors)), truncated, withVectors };
}

/** The changes since `from.generation`, merged into a new index (the old one stays valid for searches using it). */
async function refresh(store: ReadStore, tenant: MemoryTenant, from: TenantIndex, generation: number, maxCandidates: number): Promise<TenantIndex> {
  const changed = await store
    .collection<MemoryDoc>(MEMORIES)
    .find(
      { ...tenantFilter(tenant), $or: [{ stamp: { $gt: from.generation } }, { stamp: null }] },
      from.withVectors ? {} : { projection: { embedding: 0 } },
    );
  const byId = new Map(from.memories.map((m) => [m.doc._id, m]));
  for (const doc of changed) {
    if (doc.deleted) byId.delete(doc._id);
    else byId.set(doc._id, indexed(doc, from.withVectors));
  }
  const memories = [...byId.values()].sort(newestFirst);
  const truncated = from.truncated || memories.length > maxCandidates;
  return { epoch: from.epoch, generation, memories: memories.slice(0, maxCandidates), truncated, withVectors: from.withVectors };
}

export async function tenantIndex(store: ReadStore, tenant: MemoryTenant, options: { maxCandidates: number; maxCached: number; withVectors: boolean }): Promise<TenantIndex> {
  const key = tenantKeyOf({ ownerId: tenant.userId, orgId: tenant.orgId, workspaceId: tenant.workspaceId });
  // Read the counter before the memories: the index can then be newer than its tag, never older.
  const counter = await store.collection<MemoryTenantDoc>(MEMORY_TENANTS).findOne({ _id: key });
  const epoch = counter?.epoch ?? '';
  const generation = counter?.generation ?? 0;
  const cache = cacheOf(store);
  const cached = cache.entries.get(key);
  const fits = (index: TenantIndex) => index.memories.length <= options.maxCandidates && (index.withVectors || !options.withVectors);
  if (cached && cached.epoch === epoch && cached.generation === generation && fits(cached)) {
    cache.entries.delete(key); // re-insert: Map order is the LRU order
    cache.entries.set(key, cached);
    return cached;
  }
  // Concurrent searches of a changed tenant share one load.
  const loadKey = `${key}|${epoch}|${generation}|${options.maxCandidates}|${options.withVectors}`;
  let pending = cache.loading.get(loadKey);
  if (!pending) {
    const incremental = cached && cached.epoch === epoch && cached.generation < generation && fits(cached);
    pending = (
      incremental
        ? refresh(store, tenant, cached, generation, options.maxCandidates)
        : load(store, tenant, epoch, generation, options.maxCandidates, options.withVectors)
    ).finally(() => cache.loading.delete(loadKey));
    cache.loading.set(loadKey, pending);
  }
  const index = await pending;
  remember(cache, key, index, options.maxCached);
  return index;
}

function remember(cache: Cache, key: string, index: TenantIndex, maxCached: number) {
  const previous = cache.entries.get(key);
  if (previous) {
    if (previous.generation > index.generation && previous.epoch === index.epoch) return; // a newer one won the race
    cache.entries.delete(key);
    cache.size -= previous.memories.length;
  }
  if (index.memories.length > maxCached) return;
  cache.entries.set(key, index);
  cache.size += index.memories.length;
  for (const [oldest, entry] of cache.entries) {
    if (cache.size <= maxCached) break;
    cache.entries.delete(oldest);
    cache.size -= entry.memories.length;
  }
}
