import {
  checkMemoryLimits, memoryNotFound, memoryStreamId,
  type MemoryEmbedding, type MemoryOperation, type MemoryScope, type MemoryState, type MemoryTenant,
} from '../domain/memory/index.js';
import { DomainError } from '../domain/shared/decider.js';
import { EmbeddingsError } from '../ports/embeddings.js';
import type { MemoryPorts, MemoryView } from '../ports/memory.js';
import type { CommandContext } from './handle.js';
import { executeMemoryCommand } from './memory.js';

export { checkMemoryLimits };
export type { MemoryPorts, MemoryView };

/**
 * Runs one memory operation for a caller, whatever the entry point (POST /db/memory, a batch
 * item, a memory node in a flow run). A write answers once its event is in the log, without
 * waiting for the projection; a read of the read model (search, delete by scope) first waits until
 * the memory projection reached the newest memory event in the log (read-your-writes by position,
 * `ports.memories.readPosition()`), so it shows every write answered before it began, the previous
 * batch item's or node's included. Callers check the configurable limits first
 * (checkMemoryLimits), so that a bad batch is refused before anything runs.
 */
export interface MemoryActor {
  tenant: MemoryTenant;
  context: CommandContext;
  /** Recorded with every change: `api` or `run:<processId>`. */
  source: string;
  /** Waits until the memory projection reached a position (the route's settle, or the projections' waitFor): called before a read. */
  settle(position: number | null, streamId: string): Promise<void>;
  signal?: AbortSignal;
}

export interface MemorySearchView extends MemoryView {
  score: number;
  scores: { bm25: number; semantic: number | null };
}

export type MemoryOperationResult =
  | { operation: 'save'; memory: MemoryView; embedded: boolean }
  | { operation: 'search'; results: MemorySearchView[]; ranking: 'bm25' | 'hybrid'; candidatesScanned: number; truncated: boolean; warning?: string }
  | { operation: 'update'; memory: MemoryView; changed: boolean }
  | { operation: 'delete'; deleted: number; memoryIds: string[]; more: boolean };

export const DEFAULT_SEARCH_LIMIT = 10;

export function memoryViewOfState(memoryId: string, state: MemoryState): MemoryView {
  return { id: memoryId, text: state.text, metadata: state.metadata, scope: state.subject, createdAt: state.createdAt, updatedAt: state.updatedAt, version: state.version };
}

const subjectOf = (scope: MemoryScope | undefined) => ({ userId: scope?.userId ?? null, agentId: scope?.agentId ?? null, runId: scope?.runId ?? null });

/** A text's vector, or null without a provider or when the provider fails (the write still happens; the answer says `embedded: false`). */
async function embeddingOf(ports: MemoryPorts, text: string, signal?: AbortSignal): Promise<MemoryEmbedding | null> {
  const client = ports.embeddings;
  if (!client) return null;
  try {
    const [vector] = await client.embed([text], signal);
    return { model: client.model, vector };
  } catch (err) {
    if (!(err instanceof EmbeddingsError)) throw err;
    ports.logger.warn({ err: err.message }, 'memory embedding failed; saved without a vector');
    return null;
  }
}

export async function runMemoryOperation(ports: MemoryPorts, actor: MemoryActor, op: MemoryOperation): Promise<MemoryOperationResult> {
  const author = { by: actor.context.actorId, source: actor.source, tenant: actor.tenant };
  switch (op.operation) {
    case 'save': {
      const memoryId = ports.newId();
      const embedding = await embeddingOf(ports, op.text, actor.signal);
      const result = await executeMemoryCommand(ports.eventStore, actor.context, {
        type: 'SaveMemory', memoryId, text: op.text, metadata: op.metadata ?? {}, subject: subjectOf(op.scope), embedding, ...author,
      });
      return { operation: 'save', memory: memoryViewOfState(memoryId, result.state), embedded: embedding !== null };
    }
    case 'update': {
      // Embed only a new text; an unchanged one keeps its vector (the decider ignores it then).
      const embedding = op.text !== undefined ? await embeddingOf(ports, op.text, actor.signal) : undefined;
      const result = await executeMemoryCommand(ports.eventStore, actor.context, {
        type: 'UpdateMemory', memoryId: op.memoryId, scope: op.scope, text: op.text, metadata: op.metadata, embedding, ...author,
      });
      return { operation: 'update', memory: memoryViewOfState(op.memoryId, result.state), changed: result.events.length > 0 };
    }
    case 'delete':
      return op.memoryId !== undefined ? deleteById(ports, actor, op.memoryId, op.scope) : deleteByScope(ports, actor, op.scope!);
    case 'search':
      return search(ports, actor, op);
  }
}

/** Read-your-writes by position: the read model reaches every memory write in the log before it is read. */
export async function settleReads(ports: Pick<MemoryPorts, 'memories'>, actor: Pick<MemoryActor, 'settle'>): Promise<void> {
  const position = await ports.memories.readPosition();
  if (position > 0) await actor.settle(position, memoryStreamId(''));
}

async function deleteById(ports: MemoryPorts, actor: MemoryActor, memoryId: string, scope: MemoryScope | undefined): Promise<MemoryOperationResult> {
  await executeMemoryCommand(ports.eventStore, actor.context, { type: 'DeleteMemory', memoryId, scope, by: actor.context.actorId, source: actor.source, tenant: actor.tenant });
  return { operation: 'delete', deleted: 1, memoryIds: [memoryId], more: false };
}

/**
 * Every live memory of the tenant in the scope, as the read model knows it once it reached the
 * log's newest memory event (a memory saved concurrently may survive), newest first, at most MEMORY_DELETE_SCOPE_MAX per call: `more: true`
 * says to call again. Each is its own MemoryDeleted event, decided on the memory's own stream, so
 * each keeps its history; the read model only chooses which streams to visit.
 */
async function deleteByScope(ports: MemoryPorts, actor: MemoryActor, scope: MemoryScope): Promise<MemoryOperationResult> {
  const max = ports.settings.MEMORY_DELETE_SCOPE_MAX;
  await settleReads(ports, actor);
  const ids = await ports.memories.liveIdsInScope(actor.tenant, scope, max + 1);
  const more = ids.length > max;
  const deleted: string[] = [];
  for (const memoryId of ids.slice(0, max)) {
    try {
      await executeMemoryCommand(ports.eventStore, actor.context, { type: 'DeleteMemory', memoryId, scope, by: actor.context.actorId, source: actor.source, tenant: actor.tenant });
      deleted.push(memoryId);
    } catch (err) {
      // Deleted (or moved out of the scope) since the read model was read: nothing left to do.
      if (!(err instanceof DomainError && err.code === memoryNotFound().code)) throw err;
    }
  }
  return { operation: 'delete', deleted: deleted.length, memoryIds: deleted, more };
}

async function search(ports: MemoryPorts, actor: MemoryActor, op: Extract<MemoryOperation, { operation: 'search' }>): Promise<MemoryOperationResult> {
  const client = ports.embeddings;
  const settings = ports.settings;
  let queryVector: { model: string; vector: number[] } | null = null;
  let warning: string | undefined;
  if (client) {
    try {
      queryVector = { model: client.model, vector: (await client.embed([op.query], actor.signal))[0] };
    } catch (err) {
      if (!(err instanceof EmbeddingsError)) throw err;
      warning = `semantic ranking unavailable (${err.message}); ranked by BM25 only`;
    }
  }
  await settleReads(ports, actor);
  const found = await ports.memories.search({
    tenant: actor.tenant,
    scope: op.scope,
    query: op.query,
    filters: op.filters,
    limit: op.limit ?? Math.min(DEFAULT_SEARCH_LIMIT, settings.MEMORY_SEARCH_MAX_LIMIT),
    maxCandidates: settings.MEMORY_SEARCH_MAX_CANDIDATES,
    maxCached: settings.MEMORY_INDEX_CACHE_MAX,
    lexicalWeight: settings.MEMORY_HYBRID_LEXICAL_WEIGHT,
    queryVector,
  });
  return {
    operation: 'search',
    results: found.hits.map((h) => ({ ...h.memory, score: h.score, scores: { bm25: h.bm25, semantic: h.semantic } })),
    ranking: found.ranking,
    candidatesScanned: found.candidatesScanned,
    truncated: found.truncated,
    ...(warning ? { warning } : {}),
  };
}
