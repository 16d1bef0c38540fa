import { z } from 'zod';
import { DomainError } from '../shared/decider.js';
import { MEMORY_TEXT_HARD_MAX, hasScopeField, memoryIdSchema, memoryScopeSchema, metadataFilterSchema, metadataSchema } from './limits.js';

/**
 * The body of `POST /db/memory` and each item of a batch: one operation, told apart by
 * `operation`. Strict objects: an unknown field is a 400 naming it. The configurable limits
 * (text length, search limit) are checked after parsing (checkMemoryLimits below).
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

/** The configurable limits an operation must keep (named as the configuration names them). */
export interface MemoryLimits {
  MEMORY_MAX_TEXT_LENGTH: number;
  MEMORY_SEARCH_MAX_LIMIT: number;
}

/** The configurable limits, as a 400 naming the field (`prefix` is `body`, `body.operations.<i>` or `data`). */
export function checkMemoryLimits(limits: MemoryLimits, op: MemoryOperation, prefix: string): void {
  const problems: Array<{ field: string; message: string }> = [];
  const max = limits.MEMORY_MAX_TEXT_LENGTH;
  if ((op.operation === 'save' || op.operation === 'update') && op.text !== undefined && op.text.length > max) {
    problems.push({ field: `${prefix}.text`, message: `must be at most ${max} characters` });
  }
  if (op.operation === 'search') {
    if (op.query.length > max) problems.push({ field: `${prefix}.query`, message: `must be at most ${max} characters` });
    if (op.limit !== undefined && op.limit > limits.MEMORY_SEARCH_MAX_LIMIT) problems.push({ field: `${prefix}.limit`, message: `must be at most ${limits.MEMORY_SEARCH_MAX_LIMIT}` });
  }
  if (problems.length > 0) {
    throw new DomainError('VALIDATION_FAILED', problems.map((p) => `${p.field}: ${p.message}`).join('; '), 'invalid', { fields: problems });
  }
}
