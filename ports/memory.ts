import type { MemoryLimits, MemoryScope, MemoryTenant, MetadataFilter } from '../domain/memory/index.js';
import type { EmbeddingsClient } from './embeddings.js';
import type { EventStore } from './event-store.js';
import type { Logger } from './logger.js';

/** A memory as operations answer it. */
export interface MemoryView {
  id: string;
  text: string;
  metadata: Record<string, unknown>;
  scope: { userId: string | null; agentId: string | null; runId: string | null };
  createdAt: string;
  updatedAt: string;
  version: number;
}

export interface MemorySearchRequest {
  tenant: MemoryTenant;
  scope: MemoryScope;
  query: string;
  filters?: MetadataFilter;
  limit: number;
  maxCandidates: number;
  /** Memories kept in the per-process index across tenants. */
  maxCached: number;
  lexicalWeight: number;
  /** The query's embedding and the model that made it; null for lexical ranking. */
  queryVector: { model: string; vector: number[] } | null;
}

export interface MemorySearchAnswer {
  hits: Array<{ memory: MemoryView; score: number; bm25: number; semantic: number | null }>;
  candidatesScanned: number;
  truncated: boolean;
  ranking: 'bm25' | 'hybrid';
}

/** The memory read model as the memory commands query it (implemented by projections/memory-search.ts). */
export interface MemoryQueries {
  /** Ids of the tenant's live memories within the scope, newest first, at most `limit`. */
  liveIdsInScope(tenant: MemoryTenant, scope: MemoryScope, limit: number): Promise<string[]>;
  search(request: MemorySearchRequest): Promise<MemorySearchAnswer>;
  /**
   * The position a read of the read model waits for (read-your-writes by position): the newest
   * memory event in the log now (infra/memory/read-position.ts).
   */
  readPosition(): Promise<number>;
}

/** The configuration memory operations read (the MEMORY_* variables of infra/config/memory.ts). */
export interface MemorySettings extends MemoryLimits {
  MEMORY_SEARCH_MAX_CANDIDATES: number;
  MEMORY_INDEX_CACHE_MAX: number;
  MEMORY_DELETE_SCOPE_MAX: number;
  MEMORY_HYBRID_LEXICAL_WEIGHT: number;
}

/** Everything a memory operation uses, whichever entry point runs it (the API, a memory node). */
export interface MemoryPorts {
  eventStore: EventStore;
  memories: MemoryQueries;
  /** null without a configured provider: lexical ranking only. */
  embeddings: EmbeddingsClient | null;
  settings: MemorySettings;
  logger: Logger;
  newId(): string;
}
