import { z } from 'zod';
import { memoryOperationSchema } from '../../domain/memory/index.js';

/** Response shapes of the memory routes (they become the OpenAPI document). */
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const memoryViewSchema = z.object({
  id: z.string(),
  text: z.string(),
  metadata: z.record(z.string(), scalar),
  scope: z.object({ userId: z.string().nullable(), agentId: z.string().nullable(), runId: z.string().nullable() }),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int(),
});

const searchHitSchema = memoryViewSchema.extend({
  score: z.number().describe('BM25, or the hybrid score in [0, 1] when ranking is hybrid'),
  scores: z.object({ bm25: z.number(), semantic: z.number().nullable() }),
});

export const memoryResultSchema = z.discriminatedUnion('operation', [
  z.object({ operation: z.literal('save'), memory: memoryViewSchema, embedded: z.boolean().describe('an embedding was stored with it') }),
  z.object({
    operation: z.literal('search'),
    results: z.array(searchHitSchema),
    ranking: z.enum(['bm25', 'hybrid']),
    candidatesScanned: z.number().int(),
    truncated: z.boolean().describe('more memories matched the filters than MEMORY_SEARCH_MAX_CANDIDATES; the oldest were not ranked'),
    warning: z.string().optional(),
  }),
  z.object({ operation: z.literal('update'), memory: memoryViewSchema, changed: z.boolean() }),
  z.object({ operation: z.literal('delete'), deleted: z.number().int(), memoryIds: z.array(z.string()), more: z.boolean().describe('delete by scope stopped at MEMORY_DELETE_SCOPE_MAX; call again') }),
]);

export const batchBodySchema = z.strictObject({
  operations: z.array(memoryOperationSchema).min(1, 'give at least one operation').max(1000),
});

export const historyEntrySchema = z.object({
  seq: z.number().int().describe('revision of the memory: 0 is the save'),
  action: z.enum(['saved', 'updated', 'deleted']),
  previousText: z.string().nullable(),
  text: z.string().nullable(),
  previousMetadata: z.record(z.string(), scalar).nullable(),
  metadata: z.record(z.string(), scalar).nullable(),
  at: z.string(),
  by: z.string().nullable().describe('the acting user'),
  source: z.string().describe('`api`, or `run:<processId>` for a memory node'),
});
