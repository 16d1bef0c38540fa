import {
  DATASET_CATEGORY,
  EVALUATION_CATEGORY,
  type DatasetEvent,
  type EvalScope,
  type EvaluationEvent,
  type Variant,
} from '../domain/evals/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { ownedCollections, type Projector } from './projector.js';

/**
 * The evals context's lists: one summary document per dataset and per evaluation. The cases and
 * the per-case results are read from the streams (GET of one dataset or evaluation folds it:
 * progress is seen as the runner records it); the lists need only what a row shows.
 */

interface Owned extends Doc {
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  /** Revision of the last event applied: a redelivered event is skipped. */
  version: number;
}

export interface DatasetDoc extends Owned {
  name: string;
  description: string;
  caseCount: number;
  createdAt: string;
  updatedAt: string;
  /** A deleted dataset stays as a tombstone no query returns, so a redelivered create cannot bring it back. */
  deleted: boolean;
}

export interface EvaluationDoc extends Owned {
  datasetId: string;
  flowId: string;
  versions: Array<{ variant: Variant; flowVersion: number }>;
  status: string;
  done: number;
  total: number;
  /** Passed cases per variant so far. */
  passed: Record<string, number>;
  requestedAt: string;
  finishedAt: string | null;
}

const DATASETS = 'eval_datasets';
const EVALUATIONS = 'evaluations';
const idOf = (streamId: string) => streamId.slice(streamId.indexOf('-') + 1);
/** A personal workspace's lists pin ownerId too; an organization's workspace's do not (its members share them). */
const personal = { ownerId: 1, orgId: 1, workspaceId: 1 } as const;
const shared = { orgId: 1, workspaceId: 1 } as const;

async function projectDataset(recorded: RecordedEvent, store: ReadStore) {
  const event = recorded as RecordedEvent & DatasetEvent;
  const id = idOf(recorded.streamId);
  const docs = store.collection<DatasetDoc>(DATASETS);
  const doc = await docs.findOne({ _id: id });
  if (event.type === 'EvalDatasetCreated') {
    if (doc) return;
    const d = event.data;
    const created: DatasetDoc = { _id: id, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, name: d.name, description: d.description, caseCount: 0, createdAt: d.at, updatedAt: d.at, deleted: false, version: recorded.revision };
    await docs.replaceOne({ _id: id }, created, { upsert: true });
    return;
  }
  if (!doc || doc.version >= recorded.revision) return;
  const next: DatasetDoc = { ...doc, version: recorded.revision, updatedAt: event.data.at };
  if (event.type === 'EvalCasesAdded') next.caseCount += event.data.cases.length;
  else if (event.type === 'EvalCaseRemoved') next.caseCount -= 1;
  else if (event.type === 'EvalDatasetDeleted') Object.assign(next, { deleted: true, caseCount: 0 });
  await docs.replaceOne({ _id: id, version: doc.version }, next);
}

async function projectEvaluation(recorded: RecordedEvent, store: ReadStore) {
  const event = recorded as RecordedEvent & EvaluationEvent;
  const id = idOf(recorded.streamId);
  const docs = store.collection<EvaluationDoc>(EVALUATIONS);
  const doc = await docs.findOne({ _id: id });
  if (event.type === 'EvaluationRequested') {
    if (doc) return;
    const d = event.data;
    await docs.replaceOne(
      { _id: id },
      {
        _id: id, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, datasetId: d.datasetId, flowId: d.flowId, versions: d.variants, status: 'running',
        done: 0, total: d.caseIds.length * d.variants.length, passed: Object.fromEntries(d.variants.map((v) => [v.variant, 0])), requestedAt: d.at, finishedAt: null, version: recorded.revision,
      },
      { upsert: true },
    );
    return;
  }
  if (!doc || doc.version >= recorded.revision) return;
  const next: EvaluationDoc = { ...doc, version: recorded.revision };
  if (event.type === 'EvaluationRunnerClaimed') {
    // Nothing a row shows.
  } else if (event.type === 'EvaluationCaseScored') {
    next.done += 1;
    if (event.data.pass) next.passed = { ...doc.passed, [event.data.variant]: (doc.passed[event.data.variant] ?? 0) + 1 };
  } else {
    const status = { EvaluationCompleted: 'completed', EvaluationFailed: 'failed', EvaluationCancelled: 'cancelled' }[event.type];
    Object.assign(next, { status, finishedAt: event.data.at });
  }
  await docs.replaceOne({ _id: id, version: doc.version }, next);
}

export const evalsProjector: Projector = {
  name: 'evals',
  categories: [DATASET_CATEGORY, EVALUATION_CATEGORY],
  ...ownedCollections({
    [DATASETS]: [{ keys: { ...personal, createdAt: 1 } }, { keys: { ...shared, createdAt: 1 } }],
    [EVALUATIONS]: [{ keys: { ...personal, requestedAt: 1 } }, { keys: { ...shared, requestedAt: 1 } }, { keys: { status: 1, requestedAt: 1 } }],
  }),
  async project(recorded, store) {
    if (recorded.streamId.startsWith(`${DATASET_CATEGORY}-`)) await projectDataset(recorded, store);
    else await projectEvaluation(recorded, store);
  },
};

// ---- queries (every one scoped: another tenant's dataset or evaluation does not exist) ----

function scopeFilter(scope: EvalScope): Record<string, unknown> {
  return scope.orgId !== null ? { orgId: scope.orgId, workspaceId: scope.workspaceId } : { orgId: null, workspaceId: null, ownerId: scope.userId };
}

export function listDatasets(store: ReadStore, scope: EvalScope, page: { limit: number; cursor: string | null }) {
  return store.collection<DatasetDoc>(DATASETS).page({ ...scopeFilter(scope), deleted: false }, { sort: { createdAt: 1 }, limit: page.limit, cursor: page.cursor });
}

export function listEvaluations(store: ReadStore, scope: EvalScope, page: { limit: number; cursor: string | null; datasetId?: string }) {
  const filter = { ...scopeFilter(scope), ...(page.datasetId !== undefined && { datasetId: page.datasetId }) };
  return store.collection<EvaluationDoc>(EVALUATIONS).page(filter, { sort: { requestedAt: 1 }, limit: page.limit, cursor: page.cursor });
}

/** Evaluations no runner finished (for the resume at start-up); at most `limit`. */
export function runningEvaluations(store: ReadStore, limit = 100) {
  return store.collection<EvaluationDoc>(EVALUATIONS).find({ status: 'running' }, { sort: { requestedAt: 1 }, limit });
}
