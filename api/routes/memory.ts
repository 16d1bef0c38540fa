import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { memoryIdSchema, memoryOperationSchema, type MemoryOperation } from '../../domain/memory/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { checkMemoryLimits, runMemoryOperation, settleReads, type MemoryActor, type MemoryOperationResult } from '../../commands/memory-operations.js';
import { getMemory, listMemoryHistory } from '../../projections/memory.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { defineRoute, type RouteInput } from '../route.js';
import { batchBodySchema, historyEntrySchema, memoryResultSchema } from './memory-schemas.js';
import { pageQuery } from './pagination.js';

const errors = {
  400: { description: 'VALIDATION_FAILED (the field is named)' },
  401: { description: 'no or bad credentials' },
  404: { description: 'MEMORY_NOT_FOUND: unknown, deleted or another tenant\'s memory' },
  409: { description: 'CONCURRENCY_CONFLICT' },
};

const failed = 'BATCH_OPERATION_FAILED with the failing operation\'s status; details: index, operation, error {code, message}, completed (results of the operations before it, which stay applied)';
const batchErrors = {
  400: { description: `VALIDATION_FAILED (nothing ran), or ${failed}` },
  401: errors[401],
  404: { description: `${failed}: MEMORY_NOT_FOUND` },
  409: { description: `${failed}: CONCURRENCY_CONFLICT` },
};

function actorOf(input: RouteInput<unknown, unknown, unknown>): MemoryActor {
  return { tenant: flowScopeOf(input.principal!), context: input.command, source: 'api', settle: input.settle };
}

/**
 * The memory layer (Mem0-style): memories are short texts about a subject (`scope.userId`,
 * `agentId`, `runId`), owned by the caller's tenant, searched by relevance.
 */
export const memoryRoutes = [
  defineRoute({
    method: 'POST',
    path: '/db/memory',
    operationId: 'runMemoryOperation',
    summary: 'run one memory operation (save, search, update, delete)',
    tag: 'Database',
    auth: 'bearer',
    permission: 'edit_resources',
    body: memoryOperationSchema,
    responses: { 200: { description: 'the operation\'s result', schema: z.object({ success: z.literal(true) }).and(memoryResultSchema) }, ...errors },
    async handler(input) {
      checkMemoryLimits(input.services.config, input.body, 'body');
      const result = await runMemoryOperation(input.services.memory, actorOf(input), input.body);
      return { status: 200, body: { success: true, ...result } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/db/memory/batch',
    operationId: 'runMemoryBatch',
    summary: 'run several memory operations in order; the first failure stops the batch (earlier ones stay applied)',
    tag: 'Database',
    auth: 'bearer',
    permission: 'edit_resources',
    body: batchBodySchema,
    responses: {
      200: { description: 'every operation succeeded', schema: z.object({ success: z.literal(true), results: z.array(z.object({ index: z.number().int() }).and(memoryResultSchema)) }) },
      ...batchErrors,
    },
    async handler(input) {
      const { services, body } = input;
      if (body.operations.length > services.config.MEMORY_BATCH_MAX_OPERATIONS) {
        throw new ValidationError([{ field: 'body.operations', message: `at most ${services.config.MEMORY_BATCH_MAX_OPERATIONS} operations` }]);
      }
      // Every input problem is a 400 before anything runs: a bad batch is never half-applied.
      body.operations.forEach((op, i) => checkMemoryLimits(services.config, op, `body.operations.${i}`));
      const actor = actorOf(input);
      const results: Array<{ index: number } & MemoryOperationResult> = [];
      for (const [index, op] of body.operations.entries()) {
        try {
          results.push({ index, ...(await runMemoryOperation(services.memory, actor, op as MemoryOperation)) });
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          throw new DomainError(
            'BATCH_OPERATION_FAILED',
            `operation ${index} (${op.operation}) failed with ${err.code}: ${err.message}; the ${index} before it stay applied`,
            err.kind,
            { index, operation: op.operation, error: { code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) }, completed: results },
          );
        }
      }
      return { status: 200, body: { success: true, results } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/db/memory/{memoryId}/history',
    operationId: 'getMemoryHistory',
    summary: 'every change of a memory, oldest first: old and new text and metadata, when, by whom (kept after a delete)',
    tag: 'Database',
    auth: 'bearer',
    permission: 'view_resources',
    params: z.strictObject({ memoryId: memoryIdSchema }),
    query: pageQuery,
    responses: {
      200: { description: 'a page of changes', schema: z.object({ success: z.literal(true), memoryId: z.string(), deleted: z.boolean(), items: z.array(historyEntrySchema), nextCursor: z.string().nullable() }) },
      ...errors,
    },
    async handler(input) {
      const { params, query, principal, services } = input;
      // Writes answer before they are projected: the read model first reaches every memory write in the log.
      await settleReads(services.memory, input);
      const memory = await getMemory(services.readStore, params.memoryId, flowScopeOf(principal!), { includeDeleted: true });
      if (!memory) throw new NotFoundError('memory', 'MEMORY_NOT_FOUND');
      const page = await listMemoryHistory(services.readStore, params.memoryId, { limit: query.limit, cursor: query.cursor ?? null });
      const items = page.items.map(({ _id, memoryId: _m, ...entry }) => entry);
      return { status: 200, body: { success: true, memoryId: params.memoryId, deleted: memory.deleted, items, nextCursor: page.nextCursor } };
    },
  }),
];
