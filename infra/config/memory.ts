import { z } from 'zod';

const positiveInt = (fallback: number, max: number) => z.coerce.number().int().positive().max(max).default(fallback);
const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

/** Environment variables of the memory context (spread into configSchema; README's configuration table mirrors it). */
export const memoryConfigShape = {
  /** Characters of one memory's text (hard cap 100000). */
  MEMORY_MAX_TEXT_LENGTH: positiveInt(8_000, 100_000),
  /** Operations in one POST /db/memory/batch. */
  MEMORY_BATCH_MAX_OPERATIONS: positiveInt(100, 1_000),
  /** Largest `limit` a search may ask for (default limit 10). */
  MEMORY_SEARCH_MAX_LIMIT: positiveInt(100, 1_000),
  /** Memories of one tenant a search considers at most (newest first); beyond it the answer says `truncated`. */
  MEMORY_SEARCH_MAX_CANDIDATES: positiveInt(10_000, 100_000),
  /** Memories the per-process search index keeps across tenants (least recently searched tenants dropped first). */
  MEMORY_INDEX_CACHE_MAX: positiveInt(100_000, 10_000_000),
  /** Memories one delete-by-scope removes at most; the answer says `more: true` when some remain. */
  MEMORY_DELETE_SCOPE_MAX: positiveInt(1_000, 10_000),
  /** OpenAI-compatible embeddings endpoint base (`<url>/embeddings`); semantic ranking is off without it. */
  MEMORY_EMBEDDINGS_URL: optionalText.refine((v) => v === undefined || /^https?:\/\//.test(v), { message: 'must start with http:// or https://' }),
  MEMORY_EMBEDDINGS_API_KEY: optionalText,
  MEMORY_EMBEDDINGS_MODEL: z.string().trim().min(1).default('text-embedding-3-small'),
  MEMORY_EMBEDDINGS_TIMEOUT_MS: positiveInt(15_000, 300_000),
  /** Hybrid score = w · normalised BM25 + (1 − w) · cosine similarity. */
  MEMORY_HYBRID_LEXICAL_WEIGHT: z.coerce.number().min(0).max(1).default(0.5),
} satisfies Record<string, z.ZodType>;
