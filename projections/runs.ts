import type { FlowScope } from '../domain/flows/index.js';
import { evolveRun, initialRunState, type RunEvent, type RunState } from '../domain/runs/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { DuplicateKeyError, type Doc, type ReadStore } from '../infra/ports/read-store.js';
import type { RunRecoveryQueries } from '../infra/ports/runs.js';
import { type Projector, ownedCollections } from './projector.js';
import { getWorker } from './workers.js';

/**
 * Read model of runs (`processes`): one document per run. The fields queries filter and sort on
 * are plain fields; everything user-shaped (outputs, node results, inputs, the definition) lives in
 * `state`, the folded RunState as JSON text — FerretDB refuses `$`/dotted keys, which outputs may
 * hold (see flows-doc.ts). Projecting is "parse, evolve, write back", guarded by the stream
 * revision so a redelivered event changes nothing.
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
const ACTIVE = ['queued', 'running'];

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

export const runsProjector: Projector = {
  name: 'processes',
  categories: ['run'],
  ...ownedCollections({ [COLLECTION]: [{ keys: { flowId: 1, requestedAt: -1 } }, { keys: { status: 1, requestedAt: -1 } }] }),
  async project(recorded, store) {
    const processes = store.collection<ProcessDoc>(COLLECTION);
    const processId = recorded.streamId.slice('run-'.length);
    const doc = await processes.findOne({ _id: processId });
    if (doc && doc.version >= recorded.revision) return;
    const before: RunState = doc ? (JSON.parse(doc.state) as RunState) : initialRunState;
    const after = { ...evolveRun(before, recorded as unknown as RunEvent), version: recorded.revision };
    const next = docOf(processId, after);
    if (!doc) {
      try {
        await processes.insertOne(next);
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      return;
    }
    await processes.replaceOne({ _id: processId, version: doc.version }, next);
  },
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

/** The run a user started with this Idempotency-Key within the last 24 hours, if any. */
export function findIdempotentProcess(store: ReadStore, userId: string, key: string, since: string) {
  return store.collection<ProcessDoc>(COLLECTION).findOne({ requestedBy: userId, idempotencyKey: key, requestedAt: { $gte: since } });
}

export function latestFlowProcess(store: ReadStore, flowId: string) {
  return store.collection<ProcessDoc>(COLLECTION).findOne({ flowId }, { sort: { requestedAt: -1 } });
}

export function activeFlowProcesses(store: ReadStore, flowId: string) {
  return store.collection<ProcessDoc>(COLLECTION).find({ flowId, status: { $in: ACTIVE } });
}

/** Queued and running runs of the scope: the user's personal ones, or every one of the organization's workspace. */
export function listRunningProcesses(store: ReadStore, scope: FlowScope, options: { limit: number; cursor?: string | null }) {
  const tenant = scope.orgId === null ? { orgId: null, workspaceId: scope.workspaceId, ownerId: scope.userId } : { orgId: scope.orgId, workspaceId: scope.workspaceId };
  return store.collection<ProcessDoc>(COLLECTION).page({ ...tenant, status: { $in: ACTIVE } }, { sort: { requestedAt: -1 }, limit: options.limit, cursor: options.cursor ?? null });
}

/** Crash recovery's and the deadline sweep's read side (port: infra/ports/runs.ts): candidates oldest first, and worker presence. */
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
