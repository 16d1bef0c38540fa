import { z } from 'zod';
import { requestProjectionRebuild } from '../../commands/operations.js';
import { DomainError } from '../../domain/shared/decider.js';
import { projectionStreamId, type OperationEvent } from '../../domain/operations/index.js';
import { findUserAuth } from '../../projections/users-auth.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { NotFoundError } from '../errors.js';
import { defineRoute, type RouteInput } from '../route.js';

const statusSchema = z.object({
  name: z.string(),
  categories: z.array(z.string()),
  state: z.enum(['running', 'rebuilding', 'stopped', 'failed', 'remote']),
  position: z.number(),
  head: z.number(),
  lag: z.number(),
  lastError: z.string().nullable(),
});

/** Projections are global, not a tenant's: beyond manage_settings, the caller must be a configured operator. */
async function requireOperator({ principal, services }: RouteInput<unknown, unknown, unknown>) {
  const user = principal ? await findUserAuth(services.readStore, principal.userId) : null;
  if (!user || !services.config.ADMIN_EMAILS.includes(user.email.toLowerCase())) {
    throw new DomainError('OPERATOR_ONLY', 'only the service operators listed in ADMIN_EMAILS may do this', 'forbidden');
  }
}

export const adminRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/projections',
    operationId: 'listProjections',
    summary: "each projection's checkpoint and lag (operators only)",
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'manage_settings',
    responses: { 200: { description: 'the projections', schema: z.object({ success: z.literal(true), projections: z.array(statusSchema) }) }, 403: { description: 'not an operator' } },
    async handler(input) {
      await requireOperator(input);
      return { status: 200, body: { success: true, projections: await input.services.projections.status() } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/projections/{name}/rebuild',
    operationId: 'rebuildProjection',
    summary: 'drop and rebuild one projection from the log (operators only); 200 when done within the wait, else 202',
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'manage_settings',
    params: z.strictObject({ name: z.string().regex(/^[a-z0-9_-]{1,64}$/) }),
    responses: {
      200: { description: 'rebuilt', schema: z.object({ success: z.literal(true), name: z.string(), status: z.literal('rebuilt'), events: z.number(), durationMs: z.number() }) },
      202: { description: 'still rebuilding', schema: z.object({ success: z.literal(true), name: z.string(), status: z.literal('rebuilding'), requestId: z.string() }) },
      404: { description: 'no such projection' },
    },
    async handler(input) {
      await requireOperator(input);
      const { params, services, command } = input;
      if (!services.projections.has(params.name)) throw new NotFoundError('projection', 'PROJECTION_NOT_FOUND');
      const requestId = services.newId();
      const requested = await requestProjectionRebuild(services.eventStore, command, params.name, requestId);
      const outcome = await waitForOutcome(input, params.name, requestId, requested.revision);
      if (!outcome) return { status: 202, body: { success: true, name: params.name, status: 'rebuilding', requestId } };
      if (outcome.type === 'ProjectionRebuildFailed') throw new DomainError('REBUILD_FAILED', outcome.data.reason, 'internal');
      return { status: 200, body: { success: true, name: params.name, status: 'rebuilt', events: outcome.data.events, durationMs: outcome.data.durationMs } };
    },
  }),
];

/** Reads the projection's control stream (the log on purpose: the outcome is an event, not a read model). */
async function waitForOutcome({ services }: RouteInput<unknown, unknown, unknown>, name: string, requestId: string, fromRevision: number) {
  const deadline = Date.now() + services.config.ADMIN_REBUILD_WAIT_MS;
  while (Date.now() < deadline) {
    const events = (await services.eventStore.readStream(projectionStreamId(name), { fromRevision: fromRevision + 1 })) as Array<RecordedEvent & OperationEvent>;
    const outcome = events.find((e) => e.type !== 'ProjectionRebuildRequested' && e.data.requestId === requestId);
    if (outcome && outcome.type !== 'ProjectionRebuildRequested') return outcome;
    await new Promise((r) => setTimeout(r, 25));
  }
  return null;
}
