import { isPrefixTerm, PREFIX_WEIGHT } from './text.js';

/**
 * Relevance ranking of memory search, pure so it is unit-tested apart from any store.
 *
 * Lexical: Okapi BM25 over whole tokens and (at half weight) prefix terms, (k1 = 1.2, b = 0.75) with the non-negative IDF of Lucene,
 * idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)), over the tokens of text.ts. N, df and the
 * average length are those of the searched set (the tenant's memories that pass scope and filters).
 *
 * Semantic (when vectors exist): cosine similarity of the query's and the memory's embeddings.
 * Hybrid: score = w · bm25/max(bm25) + (1 − w) · max(0, cosine), w = MEMORY_HYBRID_LEXICAL_WEIGHT;
 * the lexical part is normalised per query so both parts live in [0, 1].
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface RankInput {
  id: string;
  tokens: string[];
  /** Null when the memory has no vector (saved before a provider was configured, or another model). */
  vector?: ArrayLike<number> | null;
}

export interface RankedScore {
  id: string;
  score: number;
  bm25: number;
  semantic: number | null;
}

export interface CorpusStats {
  /** Memories in the searched scope (at least the number of candidates). */
  documentCount: number;
}

/** One memory's counts of the query terms (`tf[i]` for `terms[i]`) and its length in tokens. */
export interface TermCounts {
  id: string;
  length: number;
  tf: Float64Array;
}

/**
 * BM25 of the memories that hold at least one query term. `df[i]`: memories of the searched set
 * holding `terms[i]`; `n`: memories in the set; `avgdl`: their average length. Query terms are
 * weighted: whole tokens 1, prefix terms (`abcde*`, see text.ts) PREFIX_WEIGHT.
 */
export function bm25FromCounts(terms: string[], matched: TermCounts[], df: ArrayLike<number>, n: number, avgdl: number): Map<string, number> {
  const idf = terms.map((t, i) => (isPrefixTerm(t) ? PREFIX_WEIGHT : 1) * Math.log(1 + (n - df[i] + 0.5) / (df[i] + 0.5)));
  const scores = new Map<string, number>();
  for (const { id, length, tf } of matched) {
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * length) / (avgdl || 1));
    let score = 0;
    for (let i = 0; i < tf.length; i++) if (tf[i] > 0) score += (idf[i] * tf[i] * (BM25_K1 + 1)) / (tf[i] + norm);
    scores.set(id, score);
  }
  return scores;
}

/** BM25 by scanning every document's tokens (the search uses postings instead: memory-index.ts). */
export function bm25Scores(queryTerms: string[], docs: RankInput[], stats: CorpusStats): Map<string, number> {
  const terms = [...new Set(queryTerms)];
  if (docs.length === 0 || terms.length === 0) return new Map();
  const termNumber = new Map(terms.map((t, i) => [t, i]));
  const df = new Float64Array(terms.length);
  const matched: TermCounts[] = [];
  let totalLength = 0;
  for (const doc of docs) {
    totalLength += doc.tokens.length;
    let tf: Float64Array | null = null;
    for (const token of doc.tokens) {
      const n = termNumber.get(token);
      if (n === undefined) continue;
      tf ??= new Float64Array(terms.length);
      if (tf[n] === 0) df[n]++;
      tf[n]++;
    }
    if (tf) matched.push({ id: doc.id, length: doc.tokens.length, tf });
  }
  return bm25FromCounts(terms, matched, df, Math.max(stats.documentCount, docs.length), totalLength / docs.length);
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Scores every candidate; those with no lexical match and no positive similarity are dropped.
 * Sorted best first; ties keep the candidates' order (the caller passes newest first).
 */
export function rankMemories(
  queryTerms: string[],
  queryVector: ArrayLike<number> | null,
  docs: RankInput[],
  stats: CorpusStats,
  lexicalWeight: number,
  /** BM25 scores already computed (from postings); else computed by scanning `docs`. */
  precomputed?: Map<string, number>,
): RankedScore[] {
  const lexical = precomputed ?? bm25Scores(queryTerms, docs, stats);
  let maxLexical = 0;
  for (const v of lexical.values()) if (v > maxLexical) maxLexical = v;
  const ranked: RankedScore[] = [];
  for (const doc of docs) {
    const bm25 = lexical.get(doc.id) ?? 0;
    if (bm25 === 0 && !(queryVector && doc.vector)) continue;
    const semantic = queryVector && doc.vector ? cosine(queryVector, doc.vector) : null;
    const score = queryVector
      ? lexicalWeight * (maxLexical > 0 ? bm25 / maxLexical : 0) + (1 - lexicalWeight) * Math.max(0, semantic ?? 0)
      : bm25;
    if (score > 0) ranked.push({ id: doc.id, score, bm25, semantic });
  }
  return ranked.map((r, i) => ({ r, i })).sort((a, b) => b.r.score - a.r.score || a.i - b.i).map(({ r }) => r);
}
