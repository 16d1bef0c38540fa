import { z } from 'zod';
import { deadLetterState, discardDeadLetter, requestDeadLetterRetry } from '../../commands/operations-dead-letters.js';
import { deadLetterStreamId, type DeadLetterEvent } from '../../domain/operations/dead-letters.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { sleep } from '../../lib/sleep.js';
import { countDeadLetters, getDeadLetter, listDeadLetters, type DeadLetterView } from '../../projections/operations-dead-letters.js';
import { consumerRunner } from '../../projections/workers.js';
import { defineRoute, type RouteInput } from '../route.js';
import { requireOperator } from './operations.js';
import { pageQuery } from './pagination.js';

const statusSchema = z.enum(['open', 'resolved', 'discarded']);
const letterSchema = z.object({
  id: z.string(),
  kind: z.enum(['event', 'undecodable']).describe('`undecodable`: a bus message that is no event (its raw bytes are in `message`); it cannot be retried, only discarded'),
  consumer: z.string(),
  event: z.object({ id: z.string(), type: z.string(), streamId: z.string(), revision: z.number(), position: z.number() }).nullable().describe('the failed event; null for an undecodable message'),
  message: z
    .object({
      topic: z.string(),
      partition: z.number(),
      offset: z.string(),
      key: z.string().nullable(),
      valueBase64: z.string().describe('the raw value, base64, at most its first 64 KiB'),
      size: z.number().describe('the raw value\'s size in bytes as it arrived'),
      truncated: z.boolean(),
    })
    .nullable()
    .describe('the raw Kafka message of an undecodable letter; null for an event'),
  status: statusSchema,
  attempts: z.number(),
  lastError: z.string(),
  firstFailedAt: z.string(),
  lastFailedAt: z.string(),
  retries: z.number(),
  resolvedAt: z.string().nullable(),
  discardedAt: z.string().nullable(),
  discardReason: z.string().nullable(),
});
const countsSchema = z.record(z.string(), z.object({ open: z.number(), resolved: z.number(), discarded: z.number() }));
const idParams = z.strictObject({ id: z.string().regex(/^[a-f0-9]{32}$/) });

const view = (d: DeadLetterView) => ({
  id: d._id,
  kind: d.kind ?? 'event',
  consumer: d.consumer,
  event: d.eventId == null ? null : { id: d.eventId, type: d.eventType!, streamId: d.streamId!, revision: d.revision!, position: d.position! },
  message: d.message ?? null,
  status: d.status,
  attempts: d.attempts,
  lastError: d.lastError,
  firstFailedAt: d.firstFailedAt,
  lastFailedAt: d.lastFailedAt,
  retries: d.retries,
  resolvedAt: d.resolvedAt,
  discardedAt: d.discardedAt ?? null,
  discardReason: d.discardReason ?? null,
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
      status: statusSchema.optional(),
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
      202: {
        description: 'a worker runs the consumer but none answered within the wait: the request stays queued (`queued: true`) and the first worker to take it delivers it',
        schema: z.object({ success: z.literal(true), status: z.literal('retrying'), requestId: z.string(), queued: z.literal(true), message: z.string() }),
      },
      404: { description: 'no such dead letter (DEAD_LETTER_NOT_FOUND)' },
      409: { description: 'already resolved (DEAD_LETTER_RESOLVED) or discarded (DEAD_LETTER_DISCARDED); an undecodable message, which has no event to deliver (DEAD_LETTER_NOT_RETRIABLE); or no live worker runs its consumer (CONSUMER_NOT_RUNNING)' },
    },
    async handler(input) {
      await requireOperator(input);
      const { params, services, command, settle } = input;
      const requestId = services.newId();
      // Who would take the retry, asked before it is queued: a request no worker takes waits forever.
      const { state } = await deadLetterState(services.eventStore, params.id);
      const runner = state.consumer ? await consumerRunner(services.readStore, state.consumer, services.now(), services.config.WORKER_HEARTBEAT_MS) : 'unknown';
      const requested = await requestDeadLetterRetry(services.eventStore, command, params.id, requestId, runner !== 'none');
      const outcome = await waitForOutcome(input, params.id, requestId, requested.revision);
      if (!outcome) {
        const message = `no worker answered within ${services.config.ADMIN_REBUILD_WAIT_MS} ms; the retry stays queued and a worker running ${state.consumer} delivers it when it gets to it`;
        return { status: 202, body: { success: true, status: 'retrying', requestId, queued: true, message } };
      }
      await settle(outcome.position, deadLetterStreamId(params.id));
      const letter = await getDeadLetter(services.readStore, params.id);
      const failed = outcome.type === 'DeadLetterRetryFailed';
      return {
        status: 200,
        body: { success: true, outcome: failed ? 'failed' : 'resolved', ...(failed ? { error: outcome.data.error } : {}), deadLetter: letter ? view(letter) : null },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/dead-letters/{id}/discard',
    operationId: 'discardDeadLetter',
    summary: 'closes a dead letter without delivering it (operators only): it leaves the open list and a queued retry of it delivers nothing; discarding twice is the same',
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'manage_settings',
    params: idParams,
    body: z.strictObject({ reason: z.string().trim().min(1).max(500).optional().describe('why, kept in the log and shown on the letter') }).default({}),
    responses: {
      200: { description: 'discarded', schema: z.object({ success: z.literal(true), deadLetter: letterSchema.nullable() }) },
      404: { description: 'no such dead letter (DEAD_LETTER_NOT_FOUND)' },
      409: { description: 'already delivered successfully (DEAD_LETTER_RESOLVED)' },
    },
    async handler(input) {
      await requireOperator(input);
      const { params, body, services, command, settle } = input;
      const written = await discardDeadLetter(services.eventStore, command, params.id, body.reason ?? null);
      await settle(written.position, deadLetterStreamId(params.id));
      const letter = await getDeadLetter(services.readStore, params.id);
      return { status: 200, body: { success: true, deadLetter: letter ? view(letter) : null } };
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
