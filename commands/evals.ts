import { flowDecider, flowNotFound, flowStreamId, isVisibleTo, type FlowState } from '../domain/flows/index.js';
import {
  caseOutputOf,
  datasetDecider,
  datasetNotFound,
  datasetStreamId,
  evalVisibleTo,
  evaluationDecider,
  evaluationNotFound,
  evaluationStreamId,
  type CaseResult,
  type CaseSource,
  type DatasetState,
  type EvalCase,
  type EvalScope,
  type EvaluationState,
  type Scorer,
  type Variant,
} from '../domain/evals/index.js';
import { isFinished } from '../domain/runs/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, loadState, type CommandContext } from './handle.js';
import { loadRun } from './runs.js';
import { stateAtRevision } from './snapshots.js';

/** The evals context's write side: datasets of cases, and evaluations as they are asked for and recorded. */

export interface CaseDraft {
  input: Record<string, unknown>;
  expected: unknown;
  source: CaseSource;
}

const withIds = (drafts: CaseDraft[], newId: () => string): EvalCase[] =>
  drafts.map((d) => ({ caseId: newId(), input: d.input as EvalCase['input'], expected: (d.expected ?? null) as EvalCase['expected'], source: d.source }));

/**
 * Cases from recorded runs: each run's trigger inputs, and its output as the expected output (the
 * user edits it afterwards where the run was wrong). Runs are read from their streams; a run that
 * is unknown or another tenant's is 404 PROCESS_NOT_FOUND naming it, one still running 409
 * RUN_NOT_DONE, one cut to its summary by retention 409 RUN_HISTORY_PRUNED.
 */
export async function casesFromRuns(store: EventStore, scope: EvalScope, processIds: string[]): Promise<CaseDraft[]> {
  const drafts: CaseDraft[] = [];
  for (const processId of processIds) {
    const run = await loadRun(store, processId);
    if (!run.exists || !isVisibleTo(run, scope)) throw new DomainError('PROCESS_NOT_FOUND', 'process not found', 'not_found', { processId });
    if (!isFinished(run.status)) throw new DomainError('RUN_NOT_DONE', `run ${processId} is still ${run.status}`, 'conflict', { processId });
    if (run.historyPruned) throw new DomainError('RUN_HISTORY_PRUNED', `run ${processId} was cut down to its summary by retention: its inputs are gone`, 'conflict', { processId });
    drafts.push({ input: run.inputs, expected: caseOutputOf(run.outputs), source: { kind: 'run', processId, flowId: run.flowId } });
  }
  return drafts;
}

export function createDataset(store: EventStore, context: CommandContext, scope: EvalScope, input: { datasetId: string; name: string; description: string; cases: CaseDraft[] }, newId: () => string) {
  return handleAtContextTime(store, context, datasetStreamId(input.datasetId), datasetDecider, {
    type: 'CreateDataset', datasetId: input.datasetId, name: input.name, description: input.description, cases: withIds(input.cases, newId),
    ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId,
  });
}

export function addCases(store: EventStore, context: CommandContext, scope: EvalScope, datasetId: string, cases: CaseDraft[], newId: () => string) {
  return handleAtContextTime(store, context, datasetStreamId(datasetId), datasetDecider, { type: 'AddCases', scope, cases: withIds(cases, newId) });
}

export function editCase(store: EventStore, context: CommandContext, scope: EvalScope, datasetId: string, caseId: string, change: { input?: Record<string, unknown>; expected?: unknown }) {
  return handleAtContextTime(store, context, datasetStreamId(datasetId), datasetDecider, { type: 'EditCase', scope, caseId, ...change });
}

export function removeCase(store: EventStore, context: CommandContext, scope: EvalScope, datasetId: string, caseId: string) {
  return handleAtContextTime(store, context, datasetStreamId(datasetId), datasetDecider, { type: 'RemoveCase', scope, caseId });
}

export function deleteDataset(store: EventStore, context: CommandContext, scope: EvalScope, datasetId: string) {
  return handleAtContextTime(store, context, datasetStreamId(datasetId), datasetDecider, { type: 'DeleteDataset', scope });
}

/** The dataset from its stream (read-your-writes), 404 when missing, deleted or another tenant's. */
export async function visibleDataset(store: EventStore, scope: EvalScope, datasetId: string): Promise<{ state: DatasetState; revision: number }> {
  const loaded = await loadState(store, datasetStreamId(datasetId), datasetDecider);
  if (!loaded.state.exists || loaded.state.deleted || !evalVisibleTo(loaded.state, scope)) throw datasetNotFound();
  return loaded;
}

/** The evaluation from its stream: progress is read where the runner writes it. */
export async function visibleEvaluation(store: EventStore, scope: EvalScope, evaluationId: string): Promise<{ state: EvaluationState; revision: number }> {
  const loaded = await loadState(store, evaluationStreamId(evaluationId), evaluationDecider);
  if (!loaded.state.exists || !evalVisibleTo(loaded.state, scope)) throw evaluationNotFound();
  return loaded;
}

/** The flow as of `version` (404 VERSION_NOT_FOUND beyond its stream, 409 VERSION_DELETED when it was deleted by then). */
export async function flowAtVersion(store: EventStore, flowId: string, version: number, field: string): Promise<FlowState> {
  const { state, folded } = await stateAtRevision(store, flowStreamId(flowId), flowDecider, version);
  if (folded < version) throw new DomainError('VERSION_NOT_FOUND', `flow ${flowId} has no version ${version} (latest is ${folded})`, 'not_found', { field, latest: folded });
  if (state.deleted) throw new DomainError('VERSION_DELETED', `flow ${flowId} was deleted at version ${version}`, 'conflict', { field, version });
  if (!state.exists) throw flowNotFound();
  return state;
}

export interface EvaluationRequest {
  evaluationId: string;
  dataset: { datasetId: string; revision: number; caseIds: string[] };
  flowId: string;
  variants: Array<{ variant: Variant; flowVersion: number }>;
  scorers: Scorer[];
  concurrency: number;
}

export function requestEvaluation(store: EventStore, context: CommandContext, scope: EvalScope, request: EvaluationRequest) {
  return handleAtContextTime(store, context, evaluationStreamId(request.evaluationId), evaluationDecider, {
    type: 'RequestEvaluation', evaluationId: request.evaluationId, datasetId: request.dataset.datasetId, datasetRevision: request.dataset.revision,
    caseIds: request.dataset.caseIds, flowId: request.flowId, variants: request.variants, scorers: request.scorers, concurrency: request.concurrency,
    requestedBy: scope.userId, ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId,
  });
}

/** Stops an evaluation (409 EVALUATION_FINISHED once it ended); runners see it at their next result. */
export function cancelEvaluation(store: EventStore, context: CommandContext, scope: EvalScope, evaluationId: string) {
  return handleAtContextTime(store, context, evaluationStreamId(evaluationId), evaluationDecider, { type: 'CancelEvaluation', scope });
}

/** Takes the evaluation on for `runner`; 409 EVALUATION_CLAIMED while another runner holds it, EVALUATION_FINISHED once it ended. */
export function claimEvaluation(store: EventStore, context: CommandContext, evaluationId: string, runner: string, holderDead = false) {
  return handleAtContextTime(store, context, evaluationStreamId(evaluationId), evaluationDecider, { type: 'ClaimEvaluation', runner, holderDead });
}

/** Results are facts: recorded in any order by concurrent workers, serialized per stream by the handler. */
export function recordCaseResult(store: EventStore, context: CommandContext, evaluationId: string, result: CaseResult) {
  return handleAtContextTime(store, context, evaluationStreamId(evaluationId), evaluationDecider, { type: 'RecordCaseResult', result });
}

export function finishEvaluation(store: EventStore, context: CommandContext, evaluationId: string, failure?: { code: string; message: string }) {
  return handleAtContextTime(
    store, context, evaluationStreamId(evaluationId), evaluationDecider,
    failure ? { type: 'FailEvaluation', code: failure.code, message: failure.message } : { type: 'CompleteEvaluation' },
  );
}
