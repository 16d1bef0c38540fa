import { z } from 'zod';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Environment variables of the documents context (spread into configSchema; README's configuration table mirrors it). */
export const documentsConfigShape = {
  /** One document's JSON text, UTF-8, without `_id`. */
  DOCUMENTS_MAX_DOCUMENT_BYTES: positiveInt(256 * 1024),
  /** Object/array nesting inside a document. */
  DOCUMENTS_MAX_DOCUMENT_DEPTH: positiveInt(20),
  DOCUMENTS_MAX_PER_COLLECTION: positiveInt(1_000_000),
  /**
   * How long a document slot claim may wait for its insert before a reconciliation may fence it and
   * give the slot back (a claim left by a process that stopped between claim and write). Longer
   * than any insert takes: an insert slower than this is fenced and claims again.
   */
  DOCUMENTS_CLAIM_TTL_MS: positiveInt(60_000),
  /** Collections per owner (a personal workspace, or an organization workspace). */
  DOCUMENTS_MAX_COLLECTIONS: positiveInt(100),
  DOCUMENTS_MAX_INDEXES: positiveInt(10),
  DOCUMENTS_MAX_SCHEMA_BYTES: positiveInt(64 * 1024),
  /** Nesting of $and/$or/$nor/$not/$elemMatch in a search filter. */
  DOCUMENTS_MAX_FILTER_DEPTH: positiveInt(8),
  /** Conditions (keys) in one search filter. */
  DOCUMENTS_MAX_FILTER_CONDITIONS: positiveInt(200),
  /** Values in one $in / $nin / $all list. */
  DOCUMENTS_MAX_FILTER_LIST: positiveInt(1000),
  DOCUMENTS_MAX_REGEX_LENGTH: positiveInt(256),
  /** Largest `limit` of one search page (the default is 20). */
  DOCUMENTS_MAX_SEARCH_LIMIT: positiveInt(1000),
  /** How far a search may page (`cursor` offsets); deeper pages need a narrower filter. */
  DOCUMENTS_MAX_SEARCH_OFFSET: positiveInt(100_000),
  /** Server-side time limit of one search (maxTimeMS on MongoDB; checked while scanning when embedded). */
  DOCUMENTS_SEARCH_TIMEOUT_MS: positiveInt(5000),
} satisfies Record<string, z.ZodType>;
