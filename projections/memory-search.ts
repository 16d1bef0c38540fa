import { SCOPE_FIELDS, bm25FromCounts, indexTerms, matchesMetadataFilter, rankMemories, tokenize, type TermCounts, type MemoryScope, type MemoryTenant } from '../domain/memory/index.js';
import type { MemoryQueries, MemorySearchRequest, MemoryView } from '../ports/memory.js';
import type { Filter, ReadStore } from '../ports/read-store.js';
import { postingsOf, tenantIndex, type IndexedMemory, type TenantIndex } from './memory-index.js';
import { memoryIdsMatching, tenantFilter, type MemoryDoc } from './memory.js';

/**
 * Memory search: the tenant's live memories come from the per-process index (memory-index.ts,
 * validated against the read store on every search), are filtered in process by scope fields and
 * metadata filters (domain/memory/filter.ts: the same code on every store, so answers are
 * identical embedded and on MongoDB), then ranked (domain/memory/rank.ts). BM25 statistics (N,
 * df, average length) are those of the filtered set, exactly. At most `maxCandidates` memories
 * of a tenant are considered, newest first; `truncated: true` says older ones were not.
 */
export type { MemorySearchRequest };

export interface MemorySearchHit {
  doc: MemoryDoc;
  score: number;
  bm25: number;
  semantic: number | null;
}

export interface MemorySearchResult {
  hits: MemorySearchHit[];
  candidatesScanned: number;
  truncated: boolean;
  ranking: 'bm25' | 'hybrid';
}

/** Tenant, live and scope fields as one store filter (delete by scope). */
export function memoryFilter(tenant: MemoryTenant, scope: MemoryScope): Filter {
  const filter: Filter = { ...tenantFilter(tenant), deleted: false };
  for (const field of SCOPE_FIELDS) if (scope[field] !== undefined) filter[field] = scope[field];
  return filter;
}

/** BM25 of the selected memories through the postings: touches only the memories holding a query term. */
function bm25FromPostings(index: TenantIndex, terms: string[], selected: Uint8Array, n: number, totalLength: number): Map<string, number> {
  const postings = postingsOf(index);
  const width = terms.length;
  // Term counts of every memory, flat (position × term): no per-memory allocation in the hot loop.
  const tf = new Float64Array(index.memories.length * width);
  const seen = new Uint8Array(index.memories.length);
  const touched: number[] = [];
  const df = new Float64Array(width);
  terms.forEach((term, i) => {
    for (const position of postings.get(term) ?? []) {
      if (!selected[position]) continue;
      const k = position * width + i;
      if (tf[k] === 0) df[i]++;
      tf[k]++;
      if (!seen[position]) {
        seen[position] = 1;
        touched.push(position);
      }
    }
  });
  const matched: TermCounts[] = touched.map((position) => ({
    id: index.memories[position].doc._id,
    length: index.memories[position].tokens.length,
    tf: tf.subarray(position * width, position * width + width),
  }));
  return bm25FromCounts(terms, matched, df, n, n ? totalLength / n : 1);
}

const inScope = (doc: MemoryDoc, scope: MemoryScope) => SCOPE_FIELDS.every((f) => scope[f] === undefined || doc[f] === scope[f]);

export async function searchMemories(store: ReadStore, request: MemorySearchRequest): Promise<MemorySearchResult> {
  const vector = request.queryVector;
  const ranking = vector ? 'hybrid' : 'bm25';
  const terms = [...new Set(indexTerms(tokenize(request.query)))];
  if (!vector && terms.length === 0) return { hits: [], candidatesScanned: 0, truncated: false, ranking };
  const index = await tenantIndex(store, request.tenant, { maxCandidates: request.maxCandidates, maxCached: request.maxCached, withVectors: vector !== null });
  const selected = new Uint8Array(index.memories.length);
  const candidates: IndexedMemory[] = [];
  let totalLength = 0;
  index.memories.forEach((m, position) => {
    if (!inScope(m.doc, request.scope) || !matchesMetadataFilter(m.doc.metadata, request.filters)) return;
    selected[position] = 1;
    candidates.push(m);
    totalLength += m.tokens.length;
  });
  const lexical = bm25FromPostings(index, terms, selected, candidates.length, totalLength);
  // Lexical only: the memories the postings matched are the only ones that can score.
  const ranked = rankMemories(
    terms,
    vector?.vector ?? null,
    (vector ? candidates : candidates.filter((m) => lexical.has(m.doc._id))).map(({ doc, tokens, vector: v }) => ({
      id: doc._id,
      tokens,
      vector: vector && doc.embeddingModel === vector.model ? v : null,
    })),
    { documentCount: candidates.length },
    request.lexicalWeight,
    lexical,
  );
  const top = ranked.slice(0, request.limit);
  const wanted = new Set(top.map((r) => r.id));
  const byId = new Map(candidates.filter((m) => wanted.has(m.doc._id)).map((m) => [m.doc._id, m.doc]));
  const hits = top.map((r) => {
    const { embedding: _e, tokens: _t, ...doc } = byId.get(r.id)!;
    return { doc: doc as MemoryDoc, score: r.score, bm25: r.bm25, semantic: r.semantic };
  });
  return { hits, candidatesScanned: candidates.length, truncated: index.truncated, ranking };
}

export function memoryViewOfDoc(doc: MemoryDoc): MemoryView {
  return {
    id: doc._id, text: doc.text, metadata: doc.metadata, scope: { userId: doc.userId, agentId: doc.agentId, runId: doc.runId },
    createdAt: doc.createdAt, updatedAt: doc.updatedAt, version: doc.version,
  };
}

/** The memory commands' query port over this read model (the read position comes from the log: infra/memory/read-position.ts). */
export function memoryQueries(store: ReadStore): Omit<MemoryQueries, 'readPosition'> {
  return {
    liveIdsInScope: (tenant, scope, limit) => memoryIdsMatching(store, memoryFilter(tenant, scope), limit),
    async search(request) {
      const found = await searchMemories(store, request);
      return { ...found, hits: found.hits.map(({ doc, ...scores }) => ({ memory: memoryViewOfDoc(doc), ...scores })) };
    },
  };
}
