import type { FlowScope } from '../domain/flows/index.js';
import { ACTIVE_STATUSES, evolveRun, initialRunState, type RunEvent, type RunState } from '../domain/runs/index.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { foldedDocs } from './folded-docs.js';
import type { RunRecoveryQueries } from '../ports/runs.js';
import { type Projector, ownedCollections } from './projector.js';
import { getWorker } from './workers.js';

/**
 * Read model of runs (`processes`): one document per run. The fields queries filter and sort on
 * are plain fields; everything user-shaped (outputs, node results, inputs, the definition) lives in
 * `state`, the folded RunState as JSON text — FerretDB refuses `$`/dotted keys, which outputs may
 * hold (see flows-doc.ts). Projecting is "parse, evolve, write back", guarded by the stream
 * revision so a redelivered event changes nothing. A batch folds each run's events onto its state
 * once and writes every run of the batch with one bulk write (see folded-docs.ts).
 */
export interface ProcessDoc extends Doc {
  flowId: string;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  mode: string;
  nodeId: string | null;
  status: string;
  requestedBy: string | null;
  idempotencyKey: string | null;
  workerId: string | null;
  requestedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
  version: number;
  state: string;
}

const COLLECTION = 'processes';

function docOf(processId: string, s: RunState): ProcessDoc {
  return {
    _id: processId,
    flowId: s.flowId,
    ownerId: s.ownerId,
    orgId: s.orgId,
    workspaceId: s.workspaceId,
    mode: s.mode,
    nodeId: s.nodeId,
    status: s.status,
    requestedBy: s.requestedBy,
    idempotencyKey: s.idempotencyKey,
    workerId: s.workerId,
    requestedAt: s.requestedAt,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
    updatedAt: s.updatedAt,
    version: s.version,
    state: JSON.stringify(s),
  };
}

const runDocs = foldedDocs<RunState, ProcessDoc>({
  collection: COLLECTION,
  streamPrefix: 'run-',
  initial: initialRunState,
  evolve: (s, e) => evolveRun(s, e as unknown as RunEvent),
  docOf,
});

/** See Projector.coalesceMs. */
export const RUN_DOCS_COALESCE_MS = 10;

export const runsProjector: Projector = {
  name: 'processes',
  categories: ['run'],
  ...ownedCollections({
    // Every index costs each run write; the active lists (status queued/running) are bounded by how
    // many runs execute at once, so they share the status index whatever the tenant.
    [COLLECTION]: [
      { keys: { flowId: 1, requestedAt: -1 } },
      { keys: { status: 1, requestedAt: -1 } },
      { keys: { status: 1, updatedAt: 1 } },
    ],
  }),
  project: (event, store) => runDocs.projectBatch([event], store),
  // A run's document is rewritten whole per batch: its nodes' events a few milliseconds apart
  // (a chain of in-process nodes) are written together (issue 29).
  coalesceMs: RUN_DOCS_COALESCE_MS,
  projectBatch: runDocs.projectBatch,
};

/** The public shape of a process: per-node states in definition order. */
export function processView(doc: ProcessDoc) {
  return runStateView(doc._id, JSON.parse(doc.state) as RunState);
}

/** The same shape from a run's state (a synchronous run answers from the state it just reached). */
export function runStateView(processId: string, s: RunState) {
  return {
    processId,
    flowId: s.flowId,
    flowVersion: s.flowVersion,
    mode: s.mode,
    nodeId: s.nodeId,
    status: s.status,
    source: s.source,
    requestedBy: s.requestedBy,
    /** A replayed run: the run it replays, where from, and the nodes answered from that run's recording. */
    replay: s.replay ?? null,
    nodes: s.definition.nodes.map((n) => {
      const ns = s.nodes[n.id];
      return {
        nodeId: n.id,
        nodeType: (n.data.nodeType as string | undefined) ?? null,
        status: ns?.status ?? 'pending',
        ...(ns?.status === 'completed' && { output: ns.output ?? null }),
        metadata: ns?.metadata ?? {},
        conditionalResults: ns?.conditionalResults ?? [],
        usage: ns?.usage ?? null,
        executionTime: ns?.executionTime ?? null,
        error: ns?.error ?? null,
        skipReason: ns?.skipReason ?? null,
        startedAt: ns?.startedAt ?? null,
        finishedAt: ns?.finishedAt ?? null,
      };
    }),
    outputs: s.outputs,
    usage: s.usage,
    error: s.failure,
    stopRequested: s.stopRequested !== null,
    requestedAt: s.requestedAt,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
    /** Set once retention cut the run down to its summary: node outputs, inputs and outputs are no longer kept. */
    historyPruned: s.historyPruned ?? null,
    version: s.version,
  };
}
export type ProcessView = ReturnType<typeof runStateView>;

const visible = (doc: Pick<ProcessDoc, 'ownerId' | 'orgId' | 'workspaceId'>, scope: FlowScope) =>
  doc.orgId === scope.orgId && doc.workspaceId === scope.workspaceId && (doc.orgId !== null || doc.ownerId === scope.userId);

/** A run, or null when missing or outside the scope (null scope: no tenant check, for internal callers). */
export async function getProcess(store: ReadStore, processId: string, scope: FlowScope | null): Promise<ProcessDoc | null> {
  const doc = await store.collection<ProcessDoc>(COLLECTION).findOne({ _id: processId });
  if (!doc || (scope && !visible(doc, scope))) return null;
  return doc;
}

export function listFlowProcesses(store: ReadStore, flowId: string, options: { limit: number; cursor?: string | null }) {
  return store.collection<ProcessDoc>(COLLECTION).page({ flowId }, { sort: { requestedAt: -1 }, limit: options.limit, cursor: options.cursor ?? null });
}

export function latestFlowProcess(store: ReadStore, flowId: string) {
  return store.collection<ProcessDoc>(COLLECTION).findOne({ flowId }, { sort: { requestedAt: -1 } });
}

export function activeFlowProcesses(store: ReadStore, flowId: string) {
  return store.collection<ProcessDoc>(COLLECTION).find({ flowId, status: { $in: [...ACTIVE_STATUSES] } });
}

/** Queued and running runs of the scope: the user's personal ones, or every one of the organization's workspace. */
export function listRunningProcesses(store: ReadStore, scope: FlowScope, options: { limit: number; cursor?: string | null }) {
  const tenant = scope.orgId === null ? { orgId: null, workspaceId: scope.workspaceId, ownerId: scope.userId } : { orgId: scope.orgId, workspaceId: scope.workspaceId };
  return store.collection<ProcessDoc>(COLLECTION).page({ ...tenant, status: { $in: [...ACTIVE_STATUSES] } }, { sort: { requestedAt: -1 }, limit: options.limit, cursor: options.cursor ?? null });
}

/** Crash recovery's and the deadline sweep's read side (port: ports/runs.ts): candidates oldest first, and worker presence. */
export function runRecoveryQueries(store: ReadStore): RunRecoveryQueries {
  return {
    async runningRuns(limit) {
      const docs = await store.collection<ProcessDoc>(COLLECTION).find({ status: 'running' }, { sort: { updatedAt: 1 }, limit });
      return docs.map((d) => ({ processId: d._id, updatedAt: d.updatedAt }));
    },
    async overdueRuns(status, requestedBefore, limit) {
      const docs = await store.collection<ProcessDoc>(COLLECTION).find({ status, requestedAt: { $lte: requestedBefore } }, { sort: { requestedAt: 1 }, limit });
      return docs.map((d) => ({ processId: d._id, requestedAt: d.requestedAt }));
    },
    workerPresence: (workerId) => getWorker(store, workerId),
  };
}
