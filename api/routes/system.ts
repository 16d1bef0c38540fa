import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { findUserAuth } from '../../projections/users-auth.js';
import {
  TASK_QUEUES,
  countRunsByStatus,
  countWorkersByStatus,
  countWorkflowsByStatus,
  listWorkerViews,
  taskQueues,
} from '../../projections/system.js';
import { defineRoute, type RouteInput } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';
import { requireOperator } from './operations.js';

/**
 * System views. Counts of runs and workflows are the caller's scope (the personal workspace, or
 * the active organization's workspace). Figures about the service itself — workers (hosts, pids),
 * projection lag, the log's size, task-queue backlogs across tenants — are the operators' (emails
 * in ADMIN_EMAILS): others get `service: null` in the overview and 403 OPERATOR_ONLY on the
 * workers and task-queue routes.
 */

export async function isOperator({ principal, services }: RouteInput<unknown, unknown, unknown>): Promise<boolean> {
  const user = principal ? await findUserAuth(services.readStore, principal.userId) : null;
  return Boolean(user && services.config.ADMIN_EMAILS.includes(user.email.toLowerCase()));
}

const counts = z.object({ total: z.number(), byStatus: z.record(z.string(), z.number()) });
const workerStatus = z.enum(['RUNNING', 'SHUTTING_DOWN', 'LOST', 'STOPPED']);
const workerSchema = z.object({
  id: z.string(),
  role: z.string(),
  host: z.string(),
  pid: z.number(),
  startedAt: z.string(),
  lastHeartbeatAt: z.string(),
  heartbeatMs: z.number(),
  stoppedAt: z.string().nullable(),
  status: workerStatus,
  runsInHand: z.number(),
  workflowsInHand: z.number(),
  consumers: z.array(z.string()).nullable().describe('the bus consumers the process runs (the dead-letter retrier delivers only to these); null: it started before announcing them'),
});
const queueSchema = z.object({
  name: z.enum(TASK_QUEUES),
  definition: z.object({ backlog: z.string(), added: z.string(), dispatched: z.string() }),
  backlog: z.number(),
  backlogAgeMs: z.number().nullable(),
  oldestSince: z.string().nullable(),
  addedLastMinute: z.number(),
  dispatchedLastMinute: z.number(),
  addRatePerSecond: z.number(),
  dispatchRatePerSecond: z.number(),
});
const serviceSchema = z.object({
  workers: z.object({ alive: z.number(), byStatus: z.record(workerStatus, z.number()) }),
  projections: z.object({
    maxLag: z.number(),
    items: z.array(z.object({ name: z.string(), state: z.string(), position: z.number(), lag: z.number() })),
  }),
  eventLog: z.object({ adapter: z.string(), headPosition: z.number(), events: z.number().nullable(), bytes: z.number().nullable() }),
});

const liveness = (input: RouteInput<unknown, unknown, unknown>) => ({
  now: input.services.now(),
  fallbackHeartbeatMs: input.services.config.WORKER_HEARTBEAT_MS,
  shutdownMs: input.services.config.SHUTDOWN_TIMEOUT_MS,
});

export const systemRoutes = [
  defineRoute({
    method: 'GET',
    path: '/system/overview',
    operationId: 'systemOverview',
    summary: "counts of the scope's runs and workflows by status; for operators also workers alive, projection lag and the event log's size",
    tag: 'System',
    auth: 'bearer',
    permission: 'view_resources',
    responses: {
      200: {
        description: '`service` is null unless the caller is an operator (ADMIN_EMAILS)',
        schema: z.object({
          success: z.literal(true),
          at: z.string(),
          scope: z.object({ orgId: z.string().nullable(), workspaceId: z.string().nullable() }),
          runs: counts,
          workflows: counts,
          service: serviceSchema.nullable(),
        }),
      },
      401: { description: 'no or invalid credentials' },
      403: { description: 'the role lacks view_resources' },
    },
    async handler(input) {
      const { services, principal } = input;
      const scope = flowScopeOf(principal!);
      const [runs, workflows, operator] = await Promise.all([countRunsByStatus(services.readStore, scope), countWorkflowsByStatus(services.readStore, scope), isOperator(input)]);
      let service: z.infer<typeof serviceSchema> | null = null;
      if (operator) {
        const { now, fallbackHeartbeatMs, shutdownMs } = liveness(input);
        const [workers, projections, log] = await Promise.all([
          countWorkersByStatus(services.readStore, now, fallbackHeartbeatMs, shutdownMs),
          services.projections.status(),
          services.eventStore.stats(),
        ]);
        service = {
          workers: { alive: workers.RUNNING + workers.SHUTTING_DOWN, byStatus: workers },
          projections: { maxLag: Math.max(0, ...projections.map((p) => p.lag)), items: projections.map((p) => ({ name: p.name, state: p.state, position: p.position, lag: p.lag })) },
          eventLog: { adapter: services.eventStore.adapter, ...log },
        };
      }
      return { status: 200, body: { success: true, at: services.now().toISOString(), scope: { orgId: scope.orgId, workspaceId: scope.workspaceId }, runs, workflows, service } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/system/task-queues',
    operationId: 'systemTaskQueues',
    summary: 'per task queue (runs, workflows, timers, webhooks, mcp): backlog, backlog age, add and dispatch rates over the last minute (operators only)',
    tag: 'System',
    auth: 'bearer',
    permission: 'view_resources',
    responses: {
      200: { description: 'the queues, service-wide', schema: z.object({ success: z.literal(true), at: z.string(), windowSeconds: z.literal(60), queues: z.array(queueSchema) }) },
      401: { description: 'no or invalid credentials' },
      403: { description: 'not an operator (OPERATOR_ONLY)' },
    },
    async handler(input) {
      await requireOperator(input);
      const now = input.services.now();
      return { status: 200, body: { success: true, at: now.toISOString(), windowSeconds: 60, queues: await taskQueues(input.services.readStore, now) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/system/workers',
    operationId: 'systemWorkers',
    summary: 'worker processes from their presence and heartbeat streams, most recently heard from first, with status and the runs and workflows each holds (operators only)',
    tag: 'System',
    auth: 'bearer',
    permission: 'view_resources',
    query: pageQuery,
    responses: {
      200: { description: '{success, items, nextCursor}', schema: z.object({ success: z.literal(true), items: z.array(workerSchema), nextCursor: z.string().nullable() }) },
      401: { description: 'no or invalid credentials' },
      403: { description: 'not an operator (OPERATOR_ONLY)' },
    },
    async handler(input) {
      await requireOperator(input);
      const page = await listWorkerViews(input.services.readStore, { limit: input.query.limit, cursor: input.query.cursor, ...liveness(input) });
      return pageReply(page);
    },
  }),
];
