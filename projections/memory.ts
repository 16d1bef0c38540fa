import { randomUUID } from 'node:crypto';
import { MAX_STORED_TOKENS, indexTerms, isMemoryVisibleTo, tokenize, type MemoryEvent, type MemoryMetadata, type MemoryTenant } from '../domain/memory/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { DuplicateKeyError, type Doc, type Filter, type Page, type ReadStore, type WriteOp } from '../ports/read-store.js';
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
  project: (recorded, store) => projectMemoryBatch([recorded], store),
  projectBatch: projectMemoryBatch,
};

type TenantOf = { ownerId: string; orgId: string | null; workspaceId: string | null };

/** One event's change: the memory's new document (a save) or the fields it sets, and its history entry. */
interface Change {
  id: string;
  revision: number;
  saved: MemoryDoc | null;
  set: Record<string, unknown> | null;
  tenant: TenantOf | null;
  history: MemoryHistoryDoc;
}

function changeOf(recorded: RecordedEvent): Change | null {
  const event = recorded as RecordedEvent & MemoryEvent;
  const id = recorded.streamId.slice('memory-'.length);
  const base = { id, revision: recorded.revision };
  const history = (entry: MemoryHistoryEntry): MemoryHistoryDoc => ({ _id: `${id}:${recorded.revision}`, memoryId: id, seq: recorded.revision, ...entry });
  switch (event.type) {
    case 'MemorySaved': {
      const d = event.data;
      const saved: MemoryDoc = {
        _id: id, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, userId: d.subject.userId, agentId: d.subject.agentId, runId: d.subject.runId,
        text: d.text, metadata: d.metadata, tokens: tokensOf(d.text), embedding: packVector(d.embedding?.vector), embeddingModel: d.embedding?.model ?? null,
        deleted: false, stamp: null, version: recorded.revision, createdAt: d.at, updatedAt: d.at,
      };
      const tenant = { ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId };
      return { ...base, saved, set: null, tenant, history: history({ action: 'saved', previousText: null, text: d.text, previousMetadata: null, metadata: d.metadata, at: d.at, by: d.by, source: d.source }) };
    }
    case 'MemoryUpdated': {
      const d = event.data;
      const set: Record<string, unknown> = { text: d.text, metadata: d.metadata, tokens: tokensOf(d.text), stamp: null, version: recorded.revision, updatedAt: d.at };
      if (d.embedding !== undefined) Object.assign(set, { embedding: packVector(d.embedding?.vector), embeddingModel: d.embedding?.model ?? null });
      return { ...base, saved: null, set, tenant: null, history: history({ action: 'updated', previousText: d.previousText, text: d.text, previousMetadata: d.previousMetadata, metadata: d.metadata, at: d.at, by: d.by, source: d.source }) };
    }
    case 'MemoryDeleted': {
      const d = event.data;
      const set = { deleted: true, text: '', metadata: {}, tokens: '', embedding: null, stamp: null, version: recorded.revision, updatedAt: d.at };
      return { ...base, saved: null, set, tenant: null, history: history({ action: 'deleted', previousText: d.previousText, text: null, previousMetadata: d.previousMetadata, metadata: null, at: d.at, by: d.by, source: d.source }) };
    }
    default:
      return null;
  }
}

/**
 * Projects events of the memory category (in log order) with a fixed number of writes whatever
 * their count, which is what keeps up on a MongoDB-wire server:
 *  1. the tenants' counters are read (memory_tenants, one lookup per tenant by `_id`);
 *  2. the memories are written in one bulk write, each stamped with its tenant's counter + 1: a
 *     save is an insert, an update or a delete a `$set` guarded by version; the history entries
 *     are inserted in one more;
 *  3. each tenant's counter is moved to that value if it still holds the value read
 *     (compare-and-set), which tells every process holding the tenant's search index that it is
 *     stale (memory-index.ts): an index of an older generation fetches `stamp > its generation`,
 *     which holds these memories, written before the counter moved.
 * Inserts are far cheaper than upserts on FerretDB 1.24/SQLite (its writes by filter scan the
 * collection). An insert that finds its document there (a redelivered batch) or a counter that
 * moved meanwhile (a second projector) falls back to the idempotent path (`projectSlowly`).
 */
export async function projectMemoryBatch(events: RecordedEvent[], store: ReadStore): Promise<void> {
  const changes = events.map(changeOf).filter((c): c is Change => c !== null);
  if (changes.length === 0) return;
  const memories = store.collection<MemoryDoc>(MEMORIES);
  const keyOf = await tenantKeysOf(store, changes);
  const tenants = store.collection<MemoryTenantDoc>(MEMORY_TENANTS);
  const keys = [...new Set(keyOf.values())];
  const counters = new Map(await Promise.all(keys.map(async (key) => [key, await tenants.findOne({ _id: key })] as const)));
  const stampOf = (id: string) => {
    const key = keyOf.get(id);
    return key === undefined ? null : (counters.get(key)?.generation ?? 0) + 1;
  };
  try {
    await memories.bulkWrite(
      changes.map((c): WriteOp<MemoryDoc> =>
        c.saved
          ? { insertOne: { document: { ...c.saved, stamp: stampOf(c.id) } } }
          : { updateOne: { filter: { _id: c.id, version: { $lt: c.revision } }, update: { $set: { ...c.set, stamp: stampOf(c.id) } } } },
      ),
    );
    await store.collection<MemoryHistoryDoc>(MEMORY_HISTORY).bulkWrite(changes.map((c) => ({ insertOne: { document: c.history } })));
  } catch (err) {
    if (!(err instanceof DuplicateKeyError)) throw err;
    await projectSlowly(store, changes, keyOf);
    return;
  }
  const moved: string[] = [];
  for (const key of keys) {
    const counter = counters.get(key);
    if (counter) {
      const r = await tenants.updateOne({ _id: key, generation: counter.generation }, { $set: { generation: counter.generation + 1 } });
      if (r.matched === 0) moved.push(key);
    } else {
      try {
        await tenants.insertOne({ _id: key, generation: 1, epoch: randomUUID() });
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
        moved.push(key);
      }
    }
  }
  if (moved.length) await restamp(store, changes.filter((c) => moved.includes(keyOf.get(c.id)!)), keyOf);
}

/** The tenant key of each memory changed: from the batch's saves, else from its document (read before any write). */
async function tenantKeysOf(store: ReadStore, changes: Change[]): Promise<Map<string, string>> {
  const keyOf = new Map<string, string>();
  for (const c of changes) if (c.tenant) keyOf.set(c.id, tenantKeyOf(c.tenant));
  const unknown = [...new Set(changes.filter((c) => !keyOf.has(c.id)).map((c) => c.id))];
  const memories = store.collection<MemoryDoc>(MEMORIES);
  await Promise.all(
    unknown.map(async (id) => {
      const doc = await memories.findOne({ _id: id }, { projection: { ownerId: 1, orgId: 1, workspaceId: 1 } });
      if (doc) keyOf.set(id, tenantKeyOf(doc));
    }),
  );
  return keyOf;
}

/**
 * The idempotent path, for a batch projected again (after a crash or a failure): every write is an
 * upsert or guarded by version, then `restamp`. A replayed save rewrites its memory as saved; the
 * events after it, projected again too, bring it back to its latest version.
 */
async function projectSlowly(store: ReadStore, changes: Change[], keyOf: Map<string, string>) {
  await store.collection<MemoryDoc>(MEMORIES).bulkWrite(
    changes.map((c): WriteOp<MemoryDoc> =>
      c.saved
        ? { replaceOne: { filter: { _id: c.id }, replacement: c.saved, upsert: true } }
        : { updateOne: { filter: { _id: c.id, version: { $lt: c.revision } }, update: { $set: c.set! } } },
    ),
  );
  await store.collection<MemoryHistoryDoc>(MEMORY_HISTORY).bulkWrite(changes.map((c) => ({ replaceOne: { filter: { _id: c.history._id }, replacement: c.history, upsert: true } })));
  // A memory written by an earlier event is only keyed now (a save replayed in this batch).
  const missing = changes.filter((c) => !keyOf.has(c.id));
  if (missing.length) for (const [id, key] of await tenantKeysOf(store, missing)) keyOf.set(id, key);
  await restamp(store, changes, keyOf);
}

/**
 * Stamps memories already written: bump each tenant's counter, read it back, stamp its memories
 * with it. A process that read the counter before the bump sees a new counter next time and
 * fetches `stamp > its generation or stamp null`, which holds these memories whatever step this is
 * at; one that read it after the bump fetches after the write. Concurrent projections of one
 * tenant may stamp with a later value than their own bump, never an earlier one.
 */
async function restamp(store: ReadStore, changes: Change[], keyOf: Map<string, string>) {
  const byTenant = new Map<string, Set<string>>();
  for (const c of changes) {
    const key = keyOf.get(c.id);
    if (key !== undefined) byTenant.set(key, (byTenant.get(key) ?? new Set()).add(c.id));
  }
  const tenants = store.collection<MemoryTenantDoc>(MEMORY_TENANTS);
  const stamps: WriteOp<MemoryDoc>[] = [];
  for (const [key, ids] of byTenant) {
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
    for (const _id of ids) stamps.push({ updateOne: { filter: { _id }, update: { $set: { stamp: counter!.generation } } } });
  }
  if (stamps.length) await store.collection<MemoryDoc>(MEMORIES).bulkWrite(stamps);
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
