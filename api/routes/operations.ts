import { z } from 'zod';
import { rebuildProjection } from '../../commands/operations.js';
import { DomainError } from '../../domain/shared/decider.js';
import { findUserAuth } from '../../projections/users-auth.js';
import { defineRoute, type RouteInput } from '../route.js';

const statusSchema = z.object({
  name: z.string(),
  categories: z.array(z.string()),
  state: z.enum(['running', 'rebuilding', 'stopped', 'failed', 'remote']),
  position: z.number(),
  head: z.number(),
  lag: z.number(),
  lastError: z.string().nullable(),
  busyMs: z.number().nullable().describe('how long the batch in flight has run (ms); a batch past 120 s is abandoned and the projection starts again from its checkpoint'),
});

/**
 * Projections and dead letters are global, not a tenant's: beyond manage_settings, the caller must
 * be a configured operator (ADMIN_EMAILS).
 */
export async function requireOperator({ principal, services }: RouteInput<unknown, unknown, unknown>) {
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
      const answer = await rebuildProjection(services, command, params.name, services.config.ADMIN_REBUILD_WAIT_MS);
      if (answer.status === 'rebuilding') return { status: 202, body: { success: true, name: params.name, status: 'rebuilding', requestId: answer.requestId } };
      return { status: 200, body: { success: true, name: params.name, status: 'rebuilt', events: answer.events, durationMs: answer.durationMs } };
    },
  }),
];

