import { z } from 'zod';
import { MEMORY_TEXT_HARD_MAX, hasScopeField, memoryIdSchema, memoryScopeSchema, metadataFilterSchema, metadataSchema } from './limits.js';

/**
 * The body of `POST /db/memory` and each item of a batch: one operation, told apart by
 * `operation`. Strict objects: an unknown field is a 400 naming it. The configurable limits
 * (text length, search limit) are checked after parsing (infra/memory/operations.ts).
 */
const text = z.string().max(MEMORY_TEXT_HARD_MAX).refine((s) => s.trim() !== '', 'must not be empty');
const scopeWithAField = memoryScopeSchema.refine(hasScopeField, 'name at least one of userId, agentId, runId');

export const saveOperationSchema = z.strictObject({
  operation: z.literal('save'),
  scope: scopeWithAField,
  text,
  metadata: metadataSchema.optional(),
});

export const searchOperationSchema = z.strictObject({
  operation: z.literal('search'),
  scope: memoryScopeSchema.default({}),
  query: z.string().max(MEMORY_TEXT_HARD_MAX).refine((s) => s.trim() !== '', 'must not be empty'),
  filters: metadataFilterSchema.optional(),
  limit: z.number().int().min(1).optional(),
});

export const updateOperationSchema = z
  .strictObject({
    operation: z.literal('update'),
    scope: memoryScopeSchema.optional(),
    memoryId: memoryIdSchema,
    text: text.optional(),
    metadata: metadataSchema.optional(),
  })
  .refine((o) => o.text !== undefined || o.metadata !== undefined, { message: 'give text or metadata (or both)', path: ['text'] });

/** By id (scope, when given, must match), or every memory of a scope (at least one field named). */
export const deleteOperationSchema = z
  .strictObject({
    operation: z.literal('delete'),
    scope: memoryScopeSchema.optional(),
    memoryId: memoryIdSchema.optional(),
  })
  .refine((o) => o.memoryId !== undefined || hasScopeField(o.scope), {
    message: 'give memoryId, or a scope with at least one of userId, agentId, runId (deleting every memory needs a scope)',
    path: ['memoryId'],
  });

export const memoryOperationSchema = z.discriminatedUnion('operation', [saveOperationSchema, searchOperationSchema, updateOperationSchema, deleteOperationSchema]);
export type MemoryOperation = z.infer<typeof memoryOperationSchema>;
export type MemoryOperationName = MemoryOperation['operation'];
