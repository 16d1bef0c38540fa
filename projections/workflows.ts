import type { FlowScope } from '../domain/flows/index.js';
import { evolveWorkflow, initialWorkflowState, WORKFLOW_STATUSES, type WorkflowEvent, type WorkflowState, type WorkflowStatus } from '../domain/workflows/index.js';
import type { Doc, Filter, ReadStore } from '../ports/read-store.js';
import { foldedDocs } from './folded-docs.js';
import type { DueTimer, WorkflowQueries } from '../ports/workflows.js';
import type { Projector } from './projector.js';

/**
 * Read models of workflows: `workflows` (one document per workflow, the list and search side) and
 * `workflowTimers` (one per pending timer: the timers consumer's scan reads the due ones). Plain
 * fields are what lists filter and sort on; `state` is the folded WorkflowState as JSON text,
 * written once per batch (folded-docs.ts).
 * GET /workflows/{id} does not read this: it folds the stream.
 */
export interface WorkflowDoc extends Doc {
  flowId: string;
  status: WorkflowStatus;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  createdBy: string | null;
  execution: number;
  createdAt: string;
  startedAt: string | null;
  closedAt: string | null;
  /** The worker holding a node in flight, or null. */
  workerId: string | null;
  updatedAt: string;
  searchAttributes: Record<string, string | number | boolean>;
  historyLength: number;
  version: number;
  state: string;
}

export interface WorkflowTimerDoc extends Doc {
  workflowId: string;
  timerId: string;
  fireAt: string;
}

const COLLECTION = 'workflows';
const TIMERS = 'workflowTimers';

function docOf(s: WorkflowState): WorkflowDoc {
  return {
    _id: s.workflowId,
    flowId: s.flowId,
    status: s.status,
    ownerId: s.ownerId,
    orgId: s.orgId,
    workspaceId: s.workspaceId,
    createdBy: s.createdBy,
    execution: s.execution,
    createdAt: s.createdAt,
    startedAt: s.startedAt,
    closedAt: s.closedAt,
    workerId: s.workerId,
    updatedAt: s.updatedAt,
    searchAttributes: s.searchAttributes,
    historyLength: s.version + 1,
    version: s.version,
    state: JSON.stringify(s),
  };
}

const workflowDocs = foldedDocs<WorkflowState, WorkflowDoc>({
  collection: COLLECTION,
  streamPrefix: 'workflow-',
  initial: initialWorkflowState,
  evolve: (s, e) => evolveWorkflow(s, e as unknown as WorkflowEvent),
  docOf: (_id, s) => docOf(s),
  afterWrite: projectTimers,
});

export const workflowsProjector: Projector = {
  name: 'workflows',
  categories: ['workflow'],
  collections: [COLLECTION, TIMERS],
  async setup(store) {
    const c = store.collection(COLLECTION);
    await c.createIndex({ keys: { orgId: 1, workspaceId: 1, createdAt: -1 } });
    await c.createIndex({ keys: { status: 1, createdAt: -1 } });
    await c.createIndex({ keys: { flowId: 1, createdAt: -1 } });
    // Workflow recovery: running workflows, least recently updated first.
    await c.createIndex({ keys: { status: 1, updatedAt: 1 } });
    await store.collection(TIMERS).createIndex({ keys: { fireAt: 1 } });
  },
  project: (event, store) => workflowDocs.projectBatch([event], store),
  projectBatch: workflowDocs.projectBatch,
};

/** Pending timers are kept, the others removed; written absolutely, so projecting twice is harmless. */
async function projectTimers(store: ReadStore, workflowId: string, before: WorkflowState, after: WorkflowState) {
  const timers = store.collection<WorkflowTimerDoc>(TIMERS);
  const ids = new Set([...Object.keys(before.timers), ...Object.keys(after.timers)]);
  for (const timerId of ids) {
    const was = before.timers[timerId]?.status;
    const is = after.timers[timerId]?.status;
    if (was === is && before.execution === after.execution) continue;
    const _id = `${workflowId}/${timerId}`;
    if (is === 'pending') await timers.replaceOne({ _id }, { _id, workflowId, timerId, fireAt: after.timers[timerId].fireAt }, { upsert: true });
    else await timers.deleteOne({ _id });
  }
}

// ---------------------------------------------------------------- queries

/** A tenant filter: the user's personal workflows, or every one of the organization's workspace. */
export function scopeFilter(scope: FlowScope): Filter {
  return scope.orgId === null ? { orgId: null, workspaceId: scope.workspaceId, ownerId: scope.userId } : { orgId: scope.orgId, workspaceId: scope.workspaceId };
}

export const workflowStateOf = (doc: WorkflowDoc) => JSON.parse(doc.state) as WorkflowState;

/** Workflows by status, every status present (0 when none); `scope` limits them to one tenant, none: all. */
export async function countWorkflowsByStatus(store: ReadStore, scope?: FlowScope | null): Promise<Record<WorkflowStatus, number>> {
  const c = store.collection<WorkflowDoc>(COLLECTION);
  const base = scope ? scopeFilter(scope) : {};
  const counts = await Promise.all(WORKFLOW_STATUSES.map((status) => c.count({ ...base, status })));
  return Object.fromEntries(WORKFLOW_STATUSES.map((s, i) => [s, counts[i]])) as Record<WorkflowStatus, number>;
}

export interface WorkflowDuration {
  workflowId: string;
  flowId: string;
  status: WorkflowStatus;
  createdAt: string;
  startedAt: string | null;
  closedAt: string | null;
  /** closedAt − startedAt in milliseconds; null while open or never started. */
  durationMs: number | null;
}

/** Workflows created at or after `since` (ISO time), oldest first, at most `limit`: started/completed/failed counts and durations. */
export async function listWorkflowDurations(store: ReadStore, since: string, options: { scope?: FlowScope | null; limit?: number } = {}): Promise<WorkflowDuration[]> {
  const base = options.scope ? scopeFilter(options.scope) : {};
  const docs = await store
    .collection<WorkflowDoc>(COLLECTION)
    .find({ ...base, createdAt: { $gte: since } }, { sort: { createdAt: 1 }, limit: options.limit ?? 10_000, projection: { _id: 1, flowId: 1, status: 1, createdAt: 1, startedAt: 1, closedAt: 1 } });
  return docs.map((d) => ({
    workflowId: d._id,
    flowId: d.flowId,
    status: d.status,
    createdAt: d.createdAt,
    startedAt: d.startedAt,
    closedAt: d.closedAt,
    durationMs: d.startedAt && d.closedAt ? Date.parse(d.closedAt) - Date.parse(d.startedAt) : null,
  }));
}

/** Open workflows with a node in flight, by the worker holding them (GET /system/workers' "workflows in hand"). */
export async function countWorkflowsByWorker(store: ReadStore): Promise<Record<string, number>> {
  const docs = await store.collection<WorkflowDoc>(COLLECTION).find({ workerId: { $ne: null } }, { projection: { _id: 1, workerId: 1 } });
  const out: Record<string, number> = {};
  for (const d of docs) if (d.workerId) out[d.workerId] = (out[d.workerId] ?? 0) + 1;
  return out;
}

export function getWorkflowDoc(store: ReadStore, workflowId: string) {
  return store.collection<WorkflowDoc>(COLLECTION).findOne({ _id: workflowId });
}

/** One page of the tenant's workflows matching `filter` (already translated), newest first. */
export function pageWorkflows(store: ReadStore, scope: FlowScope, filter: Filter, options: { limit: number; cursor?: string | null }) {
  return store.collection<WorkflowDoc>(COLLECTION).page({ ...filter, ...scopeFilter(scope) }, { sort: { createdAt: -1 }, limit: options.limit, cursor: options.cursor ?? null });
}

/** The timers consumer's read side (port: ports/workflows.ts). */
export function workflowQueries(store: ReadStore): WorkflowQueries {
  return {
    async dueTimers(before: string, limit: number): Promise<DueTimer[]> {
      const docs = await store.collection<WorkflowTimerDoc>(TIMERS).find({ fireAt: { $lte: before } }, { sort: { fireAt: 1 }, limit });
      return docs.map((d) => ({ workflowId: d.workflowId, timerId: d.timerId, fireAt: d.fireAt }));
    },
    async runningWorkflows(limit: number) {
      const docs = await store.collection<WorkflowDoc>(COLLECTION).find({ status: 'RUNNING', workerId: { $ne: null } }, { sort: { updatedAt: 1 }, limit, projection: { _id: 1, workerId: 1, updatedAt: 1 } });
      return docs.map((d) => ({ workflowId: d._id, workerId: d.workerId, updatedAt: d.updatedAt }));
    },
  };
}
