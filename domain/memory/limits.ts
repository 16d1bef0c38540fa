import { z } from 'zod';

/**
 * Hard caps of the memory context. The tunable limits (text length, batch size, search limit,
 * candidates scanned) are configuration (infra/config/memory.ts) and must stay below these.
 */
export const MEMORY_TEXT_HARD_MAX = 100_000;
export const MEMORY_ID_MAX = 128;
export const SUBJECT_ID_MAX = 200;
/** Metadata: a flat object of scalar values (see metadataSchema). */
export const METADATA_MAX_KEYS = 32;
export const METADATA_MAX_BYTES = 4096;
export const METADATA_STRING_MAX = 1000;
export const FILTER_MAX_KEYS = 16;
export const FILTER_IN_MAX = 100;
/** Tokens kept per memory in the read model (term frequencies of longer texts count their start). */
export const MAX_STORED_TOKENS = 4000;
/** History entries returned per page. */
export const MEMORY_HISTORY_PAGE_MAX = 100;

export const memoryIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'letters, digits, _ and -, at most 128');
const subjectId = z.string().trim().min(1).max(SUBJECT_ID_MAX);

/**
 * Who or what a memory is about (Mem0's user_id / agent_id / run_id): labels chosen by the caller,
 * not accounts. Tenancy (whose memories they are) is the caller's, kept apart.
 */
export const memoryScopeSchema = z.strictObject({
  userId: subjectId.optional().describe('the end user the memory is about'),
  agentId: subjectId.optional().describe('the agent the memory belongs to'),
  runId: subjectId.optional().describe('the run or session the memory comes from'),
});
export type MemoryScope = z.infer<typeof memoryScopeSchema>;
export const SCOPE_FIELDS = ['userId', 'agentId', 'runId'] as const;

export const hasScopeField = (scope: MemoryScope | undefined) => SCOPE_FIELDS.some((f) => scope?.[f] !== undefined);

export const metadataValueSchema = z.union([z.string().max(METADATA_STRING_MAX), z.number(), z.boolean(), z.null()]);
export type MetadataValue = z.infer<typeof metadataValueSchema>;
const metadataKey = z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, 'keys are letters, digits, _ and - (at most 64, no $ or .)');

/**
 * Metadata values are scalars only: filters compare them in the read store as plain fields, which
 * keeps the embedded store and MongoDB/FerretDB identical (no nested documents, no arrays, no
 * `$`/dotted keys). Anything richer goes into the text or a JSON string value.
 */
export const metadataSchema = z
  .record(metadataKey, metadataValueSchema)
  .refine((m) => Object.keys(m).length <= METADATA_MAX_KEYS, `at most ${METADATA_MAX_KEYS} keys`)
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= METADATA_MAX_BYTES, `at most ${METADATA_MAX_BYTES} bytes as JSON`);
export type MemoryMetadata = Record<string, MetadataValue>;

const comparable = z.union([z.string().max(METADATA_STRING_MAX), z.number()]);
const filterCondition = z.union([
  metadataValueSchema,
  z
    .strictObject({
      $eq: metadataValueSchema.optional(),
      $ne: metadataValueSchema.optional(),
      $in: z.array(metadataValueSchema).max(FILTER_IN_MAX).optional(),
      $nin: z.array(metadataValueSchema).max(FILTER_IN_MAX).optional(),
      $gt: comparable.optional(),
      $gte: comparable.optional(),
      $lt: comparable.optional(),
      $lte: comparable.optional(),
    })
    .refine((o) => Object.keys(o).length > 0, 'an operator object needs at least one operator'),
]);
/** `{key: value}` (equality) or `{key: {$in: [...]}}` and the other comparison operators, ANDed. */
export const metadataFilterSchema = z
  .record(metadataKey, filterCondition)
  .refine((f) => Object.keys(f).length <= FILTER_MAX_KEYS, `at most ${FILTER_MAX_KEYS} keys`);
export type MetadataFilter = z.infer<typeof metadataFilterSchema>;
