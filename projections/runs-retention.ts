import { RUN_FINISHING_EVENTS } from '../domain/runs/events.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, ReadStore, WriteOp } from '../ports/read-store.js';
import type { RunRetentionQueries } from '../ports/runs.js';
import { ORG_COLLECTIONS, type OrgView } from './orgs-views.js';
import { type Projector, ownedCollections } from './projector.js';

/**
 * Retention's candidates (`run_retention`): one small document per run whose history is still
 * whole, so the retention sweep (consumers/runs-retention.ts) finds the oldest finished runs and
 * counts a flow's kept runs without reading the `processes` documents, which carry each run's full
 * state. Its own projector, so a log written before retention existed is caught up from the start.
 * A pruned run leaves the collection: after RunHistoryPruned nothing about it is a candidate.
 */
export interface RetainedRunDoc extends Doc {
  flowId: string;
  orgId: string | null;
  requestedAt: string;
  finished: boolean;
  finishedAt: string | null;
}

export const RUN_RETENTION_COLLECTION = 'run_retention';

/** The write one run event asks for; each is idempotent, so a batch projected twice changes nothing. */
function writeOf(e: RecordedEvent): WriteOp<RetainedRunDoc> | null {
  const _id = e.streamId.slice('run-'.length);
  if (e.type === 'RunRequested') {
    const d = e.data as { flowId: string; orgId: string | null; at: string };
    // $setOnInsert: a replayed request must not make a finished run look active again.
    return { updateOne: { filter: { _id }, update: { $setOnInsert: { flowId: d.flowId, orgId: d.orgId, requestedAt: d.at, finished: false, finishedAt: null } }, upsert: true } };
  }
  if (RUN_FINISHING_EVENTS.has(e.type)) return { updateOne: { filter: { _id }, update: { $set: { finished: true, finishedAt: (e.data as { at: string }).at } } } };
  if (e.type === 'RunHistoryPruned') return { deleteOne: { filter: { _id } } };
  return null;
}

export const runRetentionProjector: Projector = {
  name: 'run-retention',
  categories: ['run'],
  ...ownedCollections({
    [RUN_RETENTION_COLLECTION]: [
      { keys: { finished: 1, finishedAt: 1 } },
      { keys: { flowId: 1, requestedAt: -1 } },
      { keys: { orgId: 1, finishedAt: 1 } },
    ],
  }),
  // Read by the sweep (every RUN_HISTORY_SWEEP_MS), never right after a write: one write a
  // second, whatever the rate of runs, instead of one transaction per run (issue 29).
  readYourWrites: false,
  coalesceMs: 1_000,
  async project(event, store) {
    const op = writeOf(event);
    if (op) await store.collection<RetainedRunDoc>(RUN_RETENTION_COLLECTION).bulkWrite([op]);
  },
  async projectBatch(events, store) {
    const ops = events.map(writeOf).filter((op): op is WriteOp<RetainedRunDoc> => op !== null);
    if (ops.length) await store.collection<RetainedRunDoc>(RUN_RETENTION_COLLECTION).bulkWrite(ops);
  },
};

/** The sweep's read side: candidates oldest first, and a flow's runs kept whole. */
export function runRetentionQueries(store: ReadStore): RunRetentionQueries {
  const runs = () => store.collection<RetainedRunDoc>(RUN_RETENTION_COLLECTION);
  return {
    /** Finished runs not pruned, finished before `before`; `orgs`: only these organizations, or all but `exceptOrgs`. */
    finishedBefore(before: string, scope: { orgId: string } | { exceptOrgs: string[] }, limit: number) {
      const org = 'orgId' in scope ? { orgId: scope.orgId } : scope.exceptOrgs.length ? { orgId: { $nin: scope.exceptOrgs } } : {};
      return runs().find({ finished: true, finishedAt: { $lt: before }, ...org }, { sort: { finishedAt: 1 }, limit });
    },
    /** Runs that finished at or after `since` (the flows a keep-last check must look at). */
    finishedSince(since: string, limit: number) {
      return runs().find({ finished: true, finishedAt: { $gte: since } }, { sort: { finishedAt: 1 }, limit, projection: { flowId: 1, orgId: 1, finishedAt: 1 } });
    },
    keptOfFlow: (flowId: string) => runs().count({ flowId, finished: true }),
    /** A flow's finished runs beyond its newest `keep`, oldest last. */
    beyondNewest(flowId: string, keep: number, limit: number) {
      return runs().find({ flowId, finished: true }, { sort: { requestedAt: -1 }, skip: keep, limit });
    },
  };
}

/** Organizations that set a run-history retention of their own (a null field: the service default). */
export async function orgRunRetentions(store: ReadStore) {
  const orgs = await store
    .collection<OrgView>(ORG_COLLECTIONS.orgs)
    .find({ $or: [{ runHistoryKeepDays: { $ne: null } }, { runHistoryKeepLast: { $ne: null } }] }, { projection: { runHistoryKeepDays: 1, runHistoryKeepLast: 1 } });
  return orgs.map((o) => ({ orgId: o._id, keepDays: o.runHistoryKeepDays ?? null, keepLast: o.runHistoryKeepLast ?? null }));
}
