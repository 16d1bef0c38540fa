import { LRUCache } from 'lru-cache';
import type { FlowScope } from '../domain/flows/index.js';
import { ACTIVE_STATUSES, evolveRun, initialRunState, type RunEvent, type RunState } from '../domain/runs/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { DuplicateKeyError, type Doc, type ReadStore, type WriteOp } from '../ports/read-store.js';
import type { RunRecoveryQueries } from '../ports/runs.js';
import { type Projector, ownedCollections } from './projector.js';
import { getWorker } from './workers.js';

/**
 * Read model of runs (`processes`): one document per run. The fields queries filter and sort on
 * are plain fields; everything user-shaped (outputs, node results, inputs, the definition) lives in
 * `state`, the folded RunState as JSON text — FerretDB refuses `$`/dotted keys, which outputs may
 * hold (see flows-doc.ts). Projecting is "parse, evolve, write back", guarded by the stream
 * revision so a redelivered event changes nothing. A batch folds each run's events onto its state
 * once and writes every run of the batch with one bulk write (see `projectBatch`).
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

/**
 * The state this process last wrote per run, so the next batch folds on it without reading and
 * parsing the document. Only a base while the stored version is still the one written: writes
 * from it are guarded by exactly that version, and a write that matches nothing drops the cache
 * and the batch is projected again from what is stored. Per read store (tests run several).
 * Reads `peek`: only a write makes a run the most recent, so the run written longest ago goes first.
 */
const CACHE_MAX = 2_048;
const folded = new WeakMap<ReadStore, LRUCache<string, RunState>>();

function cacheOf(store: ReadStore): LRUCache<string, RunState> {
  let cache = folded.get(store);
  if (!cache) folded.set(store, (cache = new LRUCache({ max: CACHE_MAX })));
  return cache;
}

const fold = (state: RunState, events: RecordedEvent[]) =>
  events.reduce<RunState>((s, e) => ({ ...evolveRun(s, e as unknown as RunEvent), version: e.revision }), state);

/** A batch's events per run, in log order. */
function byRun(events: RecordedEvent[]): Map<string, RecordedEvent[]> {
  const runs = new Map<string, RecordedEvent[]>();
  for (const e of events) {
    const id = e.streamId.slice('run-'.length);
    const list = runs.get(id);
    if (list) list.push(e);
    else runs.set(id, [e]);
  }
  return runs;
}

/**
 * One write per run: from the cached state (guard: the cached version), from the stored document
 * (guard: its version), or for a run not stored yet an upsert guarded by `version < last` (a
 * newer document makes it a refused duplicate, which changes nothing).
 */
async function writeBatch(store: ReadStore, runs: Map<string, RecordedEvent[]>, useCache: boolean): Promise<'ok' | 'stale'> {
  const processes = store.collection<ProcessDoc>(COLLECTION);
  const cache = cacheOf(store);
  const bases = new Map<string, RunState>();
  const unknown: string[] = [];
  for (const [id, events] of runs) {
    const cached = useCache ? cache.peek(id) : undefined;
    if (cached && cached.version < events[0].revision) bases.set(id, cached);
    // A batch holding a run's first event folds it from the start: nothing stored can be a base, so
    // it is not read (the guarded upsert below settles a replay). Reading new runs made every
    // batch a lookup over the whole collection on FerretDB, whose cost grew with the collection.
    else if (events[0].revision !== 0) unknown.push(id);
  }
  const stored = new Map<string, ProcessDoc>();
  if (unknown.length) {
    for (const doc of await processes.find({ _id: unknown.length === 1 ? unknown[0] : { $in: unknown } })) stored.set(doc._id, doc);
  }
  const ops: WriteOp<ProcessDoc>[] = [];
  const written = new Map<string, RunState>();
  for (const [id, events] of runs) {
    const base = bases.get(id);
    const doc = base ? undefined : stored.get(id);
    if (base || doc) {
      const from = base ?? (cache.peek(id)?.version === doc!.version ? cache.peek(id)! : (JSON.parse(doc!.state) as RunState));
      const fresh = events.filter((e) => e.revision > from.version);
      if (!fresh.length) continue; // replayed: already projected
      const after = fold(from, fresh);
      ops.push({ replaceOne: { filter: { _id: id, version: from.version }, replacement: docOf(id, after) } });
      written.set(id, after);
    } else {
      const after = fold(initialRunState, events);
      ops.push({ replaceOne: { filter: { _id: id, version: { $lt: after.version } }, replacement: docOf(id, after), upsert: true } });
      written.set(id, after);
    }
  }
  if (!ops.length) return 'ok';
  const result = await processes.bulkWrite(ops);
  // Every write found its version or inserted; otherwise the cache was behind what is stored.
  if (result.matched + result.upserted !== ops.length) {
    for (const id of runs.keys()) cache.delete(id);
    return 'stale';
  }
  for (const [id, state] of written) cache.set(id, state);
  return 'ok';
}

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
  async project(recorded, store) {
    const processes = store.collection<ProcessDoc>(COLLECTION);
    const processId = recorded.streamId.slice('run-'.length);
    cacheOf(store).delete(processId);
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
  /**
   * Each run's events of the batch folded at once, every run written by one bulk write. A write
   * that found the stored document moved on (the cache was behind) or refused as a duplicate (a
   * newer document appeared) projects the batch again from what is stored, and as a last resort
   * event by event, as `project` does.
   */
  async projectBatch(events, store) {
    const runs = byRun(events);
    try {
      if ((await writeBatch(store, runs, true)) === 'ok') return;
      if ((await writeBatch(store, runs, false)) === 'ok') return;
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
      for (const id of runs.keys()) cacheOf(store).delete(id);
    }
    for (const event of events) await runsProjector.project(event, store);
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
