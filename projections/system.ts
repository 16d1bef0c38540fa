import type { FlowScope } from '../domain/flows/index.js';
import { RUN_STATUSES } from '../domain/runs/state.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { isWorkerDead, processOfWorkerId } from '../domain/workers/liveness.js';
import { WORKFLOW_CLOSING_EVENTS } from '../domain/workflows/events.js';
import { waitingOn, type WorkflowState } from '../domain/workflows/state.js';
import type { Doc, Filter, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';
import { listWorkers, type WorkerDoc } from './workers.js';
import { countWorkflowsByStatus as workflowsByStatus, type WorkflowDoc } from './workflows.js';

/**
 * The system context reads what other contexts project (runs `processes`, `workflows`,
 * `workers`, messaging deliveries, MCP call history) and keeps one read model of its own,
 * `system_timers` (one document per workflow timer), for the `timers` task queue. Service-wide
 * figures are computed here; who may see them is the route's decision (api/routes/system.ts).
 */

// Collections of other contexts, read only (their projectors own them).
const PROCESSES = 'processes';
const WORKFLOWS = 'workflows';
const DELIVERIES = 'messaging_webhook_deliveries';
const MCP_HISTORY = 'mcp_history';
const TIMERS = 'system_timers';

/** The tenant part of a filter: the user's personal workspace, or the organization's workspace. */
export function tenantFilter(scope: FlowScope): Filter {
  return scope.orgId === null ? { orgId: null, workspaceId: scope.workspaceId, ownerId: scope.userId } : { orgId: scope.orgId, workspaceId: scope.workspaceId };
}

async function countByStatus(store: ReadStore, collection: string, statuses: readonly string[], filter: Filter) {
  const c = store.collection(collection);
  const counts = await Promise.all(statuses.map((status) => c.count({ ...filter, status })));
  const byStatus = Object.fromEntries(statuses.map((s, i) => [s, counts[i]!])) as Record<string, number>;
  return { total: counts.reduce((a, b) => a + b, 0), byStatus };
}

/** Runs of the scope by status (`queued`, `running`, `completed`, `failed`, `stopped`, `timed_out`). */
export const countRunsByStatus = (store: ReadStore, scope: FlowScope) => countByStatus(store, PROCESSES, RUN_STATUSES, tenantFilter(scope));

/** Workflows of the scope by status (the workflows projection's query). */
export async function countWorkflowsByStatus(store: ReadStore, scope: FlowScope) {
  const byStatus: Record<string, number> = await workflowsByStatus(store, scope);
  return { total: Object.values(byStatus).reduce((a, b) => a + b, 0), byStatus };
}

// ---------------------------------------------------------------------------------------------
// Workers

export type WorkerStatus = 'RUNNING' | 'SHUTTING_DOWN' | 'LOST' | 'STOPPED';

/**
 * RUNNING: beat within 3 of its intervals; LOST: silent longer without saying it stopped (killed,
 * hung, cut off); SHUTTING_DOWN: recorded its stop less than `shutdownMs` ago (it is finishing
 * in-flight work); STOPPED: recorded its stop longer ago than that.
 */
export function workerStatusOf(worker: Pick<WorkerDoc, 'lastHeartbeatAt' | 'stoppedAt' | 'heartbeatMs'>, now: Date, fallbackHeartbeatMs: number, shutdownMs: number): WorkerStatus {
  if (worker.stoppedAt) return now.getTime() - Date.parse(worker.stoppedAt) <= shutdownMs ? 'SHUTTING_DOWN' : 'STOPPED';
  return isWorkerDead(worker, now, fallbackHeartbeatMs) ? 'LOST' : 'RUNNING';
}

/** Running runs and workflows held per worker process, at most `limit` of each looked at. */
async function workInHand(store: ReadStore, limit: number) {
  const count = async (collection: string, status: string) => {
    const docs = await store.collection<Doc & { workerId?: string | null }>(collection).find({ status, workerId: { $ne: null } }, { projection: { workerId: 1 }, limit });
    const byWorker = new Map<string, number>();
    for (const d of docs) if (typeof d.workerId === 'string') byWorker.set(processOfWorkerId(d.workerId), (byWorker.get(processOfWorkerId(d.workerId)) ?? 0) + 1);
    return byWorker;
  };
  const [runs, workflows] = await Promise.all([count(PROCESSES, 'running'), count(WORKFLOWS, 'RUNNING')]);
  return { runs, workflows };
}

/** Runs and workflows looked at per request to count what each worker holds. */
const IN_HAND_SCAN = 10_000;

export interface WorkerView {
  id: string;
  role: string;
  host: string;
  pid: number;
  startedAt: string;
  lastHeartbeatAt: string;
  heartbeatMs: number;
  stoppedAt: string | null;
  status: WorkerStatus;
  runsInHand: number;
  workflowsInHand: number;
  /** The bus consumers the process announced when it started (null: started before it announced them). */
  consumers: string[] | null;
}

export async function listWorkerViews(
  store: ReadStore,
  options: { limit: number; cursor?: string | null; now: Date; fallbackHeartbeatMs: number; shutdownMs: number },
): Promise<{ items: WorkerView[]; nextCursor: string | null }> {
  const [page, inHand] = await Promise.all([listWorkers(store, { limit: options.limit, cursor: options.cursor ?? null }), workInHand(store, IN_HAND_SCAN)]);
  return {
    nextCursor: page.nextCursor,
    items: page.items.map((w) => ({
      id: w._id,
      role: w.role,
      host: w.host,
      pid: w.pid,
      startedAt: w.startedAt,
      lastHeartbeatAt: w.lastHeartbeatAt,
      heartbeatMs: w.heartbeatMs,
      stoppedAt: w.stoppedAt,
      status: workerStatusOf(w, options.now, options.fallbackHeartbeatMs, options.shutdownMs),
      runsInHand: inHand.runs.get(w._id) ?? 0,
      workflowsInHand: inHand.workflows.get(w._id) ?? 0,
      consumers: w.consumers ?? null,
    })),
  };
}

/** Workers by status among those heard from within the last day (older presences are history). */
export async function countWorkersByStatus(store: ReadStore, now: Date, fallbackHeartbeatMs: number, shutdownMs: number) {
  const since = new Date(now.getTime() - 86_400_000).toISOString();
  const docs = await store.collection<WorkerDoc>('workers').find({ lastHeartbeatAt: { $gte: since } }, { limit: 10_000 });
  const byStatus: Record<WorkerStatus, number> = { RUNNING: 0, SHUTTING_DOWN: 0, LOST: 0, STOPPED: 0 };
  for (const w of docs) byStatus[workerStatusOf(w, now, fallbackHeartbeatMs, shutdownMs)] += 1;
  return byStatus;
}

// ---------------------------------------------------------------------------------------------
// Task queues

export const TASK_QUEUES = ['runs', 'workflows', 'timers', 'webhooks', 'mcp'] as const;
export type TaskQueueName = (typeof TASK_QUEUES)[number];

export interface TaskQueueView {
  name: TaskQueueName;
  /** What waits in this queue, what "added" and "dispatched" count (the figures' meaning). */
  definition: { backlog: string; added: string; dispatched: string };
  backlog: number;
  /** Age of the oldest waiting item in ms (timers: how overdue the most overdue one is); null when empty. */
  backlogAgeMs: number | null;
  oldestSince: string | null;
  addedLastMinute: number;
  dispatchedLastMinute: number;
  addRatePerSecond: number;
  dispatchRatePerSecond: number;
}

interface QueueSpec {
  name: TaskQueueName;
  collection: string;
  definition: TaskQueueView['definition'];
  backlog: (now: string) => Filter;
  /** The field whose oldest value among the backlog dates it. */
  since: string;
  added: (from: string) => Filter;
  dispatched: (from: string) => Filter;
  /** When the filter cannot tell alone: a further test on each candidate (the oldest WORKFLOW_SCAN). */
  refine?: (doc: Doc) => boolean;
}

const WORKFLOW_SCAN = 1000;

const QUEUES: QueueSpec[] = [
  {
    name: 'runs',
    collection: PROCESSES,
    definition: { backlog: 'runs requested and not yet claimed by a worker (status queued)', added: 'runs requested', dispatched: 'runs claimed by a worker (started)' },
    backlog: () => ({ status: 'queued' }),
    since: 'requestedAt',
    added: (from) => ({ requestedAt: { $gte: from } }),
    dispatched: (from) => ({ startedAt: { $gte: from } }),
  },
  {
    name: 'workflows',
    collection: WORKFLOWS,
    definition: {
      backlog: `running workflows with no node in flight that wait on neither a signal nor a timer: ready for a worker (the oldest ${WORKFLOW_SCAN} such candidates are looked at)`,
      added: 'workflows started',
      dispatched: 'workflows closed (completed, failed, canceled, terminated, timed out)',
    },
    backlog: () => ({ status: 'RUNNING', workerId: null }),
    since: 'updatedAt',
    added: (from) => ({ startedAt: { $gte: from } }),
    dispatched: (from) => ({ closedAt: { $gte: from } }),
    refine: (doc) => waitingOn(JSON.parse((doc as WorkflowDoc).state) as WorkflowState) === null,
  },
  {
    name: 'timers',
    collection: TIMERS,
    definition: { backlog: 'pending workflow timers whose time has come and that have not fired yet', added: 'timers scheduled', dispatched: 'timers fired' },
    backlog: (now) => ({ status: 'pending', fireAt: { $lte: now } }),
    since: 'fireAt',
    added: (from) => ({ createdAt: { $gte: from } }),
    dispatched: (from) => ({ firedAt: { $gte: from } }),
  },
  {
    name: 'webhooks',
    collection: DELIVERIES,
    definition: { backlog: 'messaging webhook deliveries still pending (first attempt or a retry to come)', added: 'deliveries created', dispatched: 'deliveries that ended (delivered or failed)' },
    backlog: () => ({ status: 'pending' }),
    since: 'createdAt',
    added: (from) => ({ createdAt: { $gte: from } }),
    dispatched: (from) => ({ status: { $ne: 'pending' }, updatedAt: { $gte: from } }),
  },
  {
    name: 'mcp',
    collection: MCP_HISTORY,
    definition: { backlog: 'MCP tool calls and resource reads requested and not answered yet', added: 'requests made', dispatched: 'requests answered (completed or failed)' },
    backlog: () => ({ status: 'pending' }),
    since: 'requestedAt',
    added: (from) => ({ requestedAt: { $gte: from } }),
    dispatched: (from) => ({ finishedAt: { $gte: from } }),
  },
];

/** Every task queue's figures now, service-wide, from the read models (so the same from every API process). */
export async function taskQueues(store: ReadStore, now: Date): Promise<TaskQueueView[]> {
  const nowIso = now.toISOString();
  const from = new Date(now.getTime() - 60_000).toISOString();
  return Promise.all(
    QUEUES.map(async (q) => {
      const c = store.collection(q.collection);
      const backlogFilter = q.backlog(nowIso);
      const waiting = async (): Promise<[number, Doc | null]> => {
        if (!q.refine) return Promise.all([c.count(backlogFilter), c.findOne(backlogFilter, { sort: { [q.since]: 1 }, projection: { [q.since]: 1 } })]);
        const ready = (await c.find(backlogFilter, { sort: { [q.since]: 1 }, limit: WORKFLOW_SCAN })).filter(q.refine);
        return [ready.length, ready[0] ?? null];
      };
      const [[backlog, oldest], added, dispatched] = await Promise.all([waiting(), c.count(q.added(from)), c.count(q.dispatched(from))]);
      const oldestSince = oldest && typeof oldest[q.since] === 'string' ? (oldest[q.since] as string) : null;
      return {
        name: q.name,
        definition: q.definition,
        backlog,
        backlogAgeMs: oldestSince ? Math.max(0, now.getTime() - Date.parse(oldestSince)) : null,
        oldestSince,
        addedLastMinute: added,
        dispatchedLastMinute: dispatched,
        addRatePerSecond: Math.round((added / 60) * 1000) / 1000,
        dispatchRatePerSecond: Math.round((dispatched / 60) * 1000) / 1000,
      };
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// The timers read model

export interface TimerDoc extends Doc {
  workflowId: string;
  fireAt: string;
  status: 'pending' | 'fired' | 'canceled';
  createdAt: string;
  firedAt: string | null;
  canceledAt: string | null;
}

/** One document per workflow timer; every write sets absolute values, so a redelivered event changes nothing. */
export const systemTimersProjector: Projector = {
  name: 'system_timers',
  categories: ['workflow'],
  ...ownedCollections({ [TIMERS]: [{ keys: { status: 1, fireAt: 1 } }, { keys: { workflowId: 1 } }] }),
  async project(recorded: RecordedEvent, store) {
    const timers = store.collection<TimerDoc>(TIMERS);
    const workflowId = recorded.streamId.slice(recorded.streamId.indexOf('-') + 1);
    const data = recorded.data as { timerId?: string; fireAt?: string; at?: string };
    switch (recorded.type) {
      case 'TimerScheduled': {
        const doc: TimerDoc = { _id: data.timerId!, workflowId, fireAt: data.fireAt!, status: 'pending', createdAt: data.at!, firedAt: null, canceledAt: null };
        if (await timers.findOne({ _id: doc._id })) return;
        await timers.replaceOne({ _id: doc._id }, doc, { upsert: true });
        return;
      }
      case 'TimerFired':
        await timers.updateOne({ _id: data.timerId!, status: 'pending' }, { $set: { status: 'fired', firedAt: data.at! } });
        return;
      case 'TimerCanceled':
        await timers.updateOne({ _id: data.timerId!, status: 'pending' }, { $set: { status: 'canceled', canceledAt: data.at! } });
        return;
      default:
        // A closing event cancels the workflow's pending timers with it (the workflow decider does the same).
        if (WORKFLOW_CLOSING_EVENTS.has(recorded.type)) await timers.updateMany({ workflowId, status: 'pending' }, { $set: { status: 'canceled', canceledAt: data.at ?? recorded.metadata.occurredAt } });
    }
  },
};
