import { z } from 'zod';
import { requestDeadLetterRetry } from '../../commands/operations-dead-letters.js';
import { deadLetterStreamId, type DeadLetterEvent } from '../../domain/operations/dead-letters.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { sleep } from '../../lib/sleep.js';
import { countDeadLetters, getDeadLetter, listDeadLetters, type DeadLetterView } from '../../projections/operations-dead-letters.js';
import { defineRoute, type RouteInput } from '../route.js';
import { requireOperator } from './operations.js';
import { pageQuery } from './pagination.js';

const letterSchema = z.object({
  id: z.string(),
  consumer: z.string(),
  event: z.object({ id: z.string(), type: z.string(), streamId: z.string(), revision: z.number(), position: z.number() }),
  status: z.enum(['open', 'resolved']),
  attempts: z.number(),
  lastError: z.string(),
  firstFailedAt: z.string(),
  lastFailedAt: z.string(),
  retries: z.number(),
  resolvedAt: z.string().nullable(),
});
const countsSchema = z.record(z.string(), z.object({ open: z.number(), resolved: z.number() }));
const idParams = z.strictObject({ id: z.string().regex(/^[a-f0-9]{32}$/) });

const view = (d: DeadLetterView) => ({
  id: d._id,
  consumer: d.consumer,
  event: { id: d.eventId, type: d.eventType, streamId: d.streamId, revision: d.revision, position: d.position },
  status: d.status,
  attempts: d.attempts,
  lastError: d.lastError,
  firstFailedAt: d.firstFailedAt,
  lastFailedAt: d.lastFailedAt,
  retries: d.retries,
  resolvedAt: d.resolvedAt,
});

export const deadLetterRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/dead-letters',
    operationId: 'listDeadLetters',
    summary: 'events a consumer failed on every attempt, most recent failure first, with counts per consumer (operators only)',
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'manage_settings',
    query: pageQuery.extend({
      consumer: z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/).optional(),
      status: z.enum(['open', 'resolved']).optional(),
    }),
    responses: {
      200: { description: 'the dead letters', schema: z.object({ success: z.literal(true), deadLetters: z.array(letterSchema), nextCursor: z.string().nullable(), counts: countsSchema }) },
      403: { description: 'not an operator' },
    },
    async handler(input) {
      await requireOperator(input);
      const { query, services } = input;
      const page = await listDeadLetters(services.readStore, { consumer: query.consumer, status: query.status }, query.limit, query.cursor ?? null);
      const counts = await countDeadLetters(services.readStore);
      return { status: 200, body: { success: true, deadLetters: page.items.map(view), nextCursor: page.nextCursor, counts } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/dead-letters/{id}/retry',
    operationId: 'retryDeadLetter',
    summary: "delivers the event once more to the consumer's handler in a worker (operators only); 200 with the outcome when done within the wait, else 202",
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'manage_settings',
    params: idParams,
    responses: {
      200: { description: "retried: `outcome` resolved, or failed (another attempt recorded, the letter stays open)", schema: z.object({ success: z.literal(true), outcome: z.enum(['resolved', 'failed']), error: z.string().optional(), deadLetter: letterSchema.nullable() }) },
      202: { description: 'no worker answered within the wait', schema: z.object({ success: z.literal(true), status: z.literal('retrying'), requestId: z.string() }) },
      404: { description: 'no such dead letter' },
      409: { description: 'already resolved' },
    },
    async handler(input) {
      await requireOperator(input);
      const { params, services, command, settle } = input;
      const requestId = services.newId();
      const requested = await requestDeadLetterRetry(services.eventStore, command, params.id, requestId);
      const outcome = await waitForOutcome(input, params.id, requestId, requested.revision);
      if (!outcome) return { status: 202, body: { success: true, status: 'retrying', requestId } };
      await settle(outcome.position, deadLetterStreamId(params.id));
      const letter = await getDeadLetter(services.readStore, params.id);
      const failed = outcome.type === 'DeadLetterRetryFailed';
      return {
        status: 200,
        body: { success: true, outcome: failed ? 'failed' : 'resolved', ...(failed ? { error: outcome.data.error } : {}), deadLetter: letter ? view(letter) : null },
      };
    },
  }),
];

type Outcome = RecordedEvent & Extract<DeadLetterEvent, { type: 'DeadLetterResolved' | 'DeadLetterRetryFailed' }>;

/** Reads the letter's stream (the log on purpose: the outcome is an event a worker records). */
async function waitForOutcome({ services }: RouteInput<unknown, unknown, unknown>, id: string, requestId: string, fromRevision: number): Promise<Outcome | null> {
  const deadline = Date.now() + services.config.ADMIN_REBUILD_WAIT_MS;
  while (Date.now() < deadline) {
    const events = (await services.eventStore.readStream(deadLetterStreamId(id), { fromRevision: fromRevision + 1 })) as Array<RecordedEvent & DeadLetterEvent>;
    const outcome = events.find((e): e is Outcome => (e.type === 'DeadLetterResolved' || e.type === 'DeadLetterRetryFailed') && e.data.requestId === requestId);
    if (outcome) return outcome;
    await sleep(25);
  }
  return null;
}
