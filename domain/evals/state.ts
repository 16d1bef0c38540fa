import type { CaseResult, DatasetEvent, EvalCase, EvalScope, EvaluationEvent, Scorer, Variant } from './events.js';

export interface DatasetState {
  exists: boolean;
  deleted: boolean;
  datasetId: string;
  name: string;
  description: string;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  /** In the order they were added. */
  cases: EvalCase[];
  createdAt: string;
  updatedAt: string;
}

export const initialDatasetState: DatasetState = {
  exists: false, deleted: false, datasetId: '', name: '', description: '', ownerId: '', orgId: null, workspaceId: null, cases: [], createdAt: '', updatedAt: '',
};

export function evolveDataset(state: DatasetState, event: DatasetEvent): DatasetState {
  switch (event.type) {
    case 'EvalDatasetCreated': {
      const { at, ...d } = event.data;
      return { ...state, ...d, exists: true, createdAt: at, updatedAt: at };
    }
    case 'EvalCasesAdded':
      return { ...state, cases: [...state.cases, ...event.data.cases], updatedAt: event.data.at };
    case 'EvalCaseEdited': {
      const { caseId, input, expected, at } = event.data;
      return { ...state, cases: state.cases.map((c) => (c.caseId === caseId ? { ...c, input, expected } : c)), updatedAt: at };
    }
    case 'EvalCaseRemoved':
      return { ...state, cases: state.cases.filter((c) => c.caseId !== event.data.caseId), updatedAt: event.data.at };
    case 'EvalDatasetDeleted':
      return { ...state, deleted: true, cases: [], updatedAt: event.data.at };
  }
}

export type EvaluationStatus = 'running' | 'completed' | 'failed' | 'cancelled';

export interface EvaluationState {
  exists: boolean;
  evaluationId: string;
  status: EvaluationStatus;
  datasetId: string;
  datasetRevision: number;
  caseIds: string[];
  flowId: string;
  variants: Array<{ variant: Variant; flowVersion: number }>;
  scorers: Scorer[];
  concurrency: number;
  requestedBy: string;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  /** Keyed `<variant>:<caseId>`: a result recorded twice (a resumed runner) counts once. */
  results: Record<string, CaseResult>;
  failure: { code: string; message: string } | null;
  /** The runner holding it, and when it last showed life (its claim, its last result). */
  runner: string | null;
  heartbeatAt: string;
  requestedAt: string;
  finishedAt: string | null;
  updatedAt: string;
}

export const initialEvaluationState: EvaluationState = {
  exists: false, evaluationId: '', status: 'running', datasetId: '', datasetRevision: -1, caseIds: [], flowId: '', variants: [], scorers: [], concurrency: 1, requestedBy: '',
  ownerId: '', orgId: null, workspaceId: null, results: {}, failure: null, runner: null, heartbeatAt: '', requestedAt: '', finishedAt: null, updatedAt: '',
};

export const resultKey = (variant: Variant, caseId: string) => `${variant}:${caseId}`;

export function evolveEvaluation(state: EvaluationState, event: EvaluationEvent): EvaluationState {
  switch (event.type) {
    case 'EvaluationRequested': {
      const { at, ...d } = event.data;
      return { ...state, ...d, exists: true, status: 'running', requestedAt: at, heartbeatAt: at, updatedAt: at };
    }
    case 'EvaluationRunnerClaimed':
      return { ...state, runner: event.data.runner, heartbeatAt: event.data.at, updatedAt: event.data.at };
    case 'EvaluationCaseScored': {
      const { at, ...result } = event.data;
      return { ...state, results: { ...state.results, [resultKey(result.variant, result.caseId)]: result }, heartbeatAt: at, updatedAt: at };
    }
    case 'EvaluationCompleted':
      return { ...state, status: 'completed', finishedAt: event.data.at, updatedAt: event.data.at };
    case 'EvaluationCancelled':
      return { ...state, status: 'cancelled', finishedAt: event.data.at, updatedAt: event.data.at };
    case 'EvaluationFailed':
      return { ...state, status: 'failed', failure: { code: event.data.code, message: event.data.message }, finishedAt: event.data.at, updatedAt: event.data.at };
  }
}

/** How far an evaluation is: results recorded out of cases × variants. */
export function progressOf(state: EvaluationState): { done: number; total: number } {
  return { done: Object.keys(state.results).length, total: state.caseIds.length * state.variants.length };
}

/** The (variant, case) pairs still to run, in dataset order, variant a first. */
export function pendingWork(state: EvaluationState): Array<{ variant: Variant; caseId: string; flowVersion: number }> {
  const out: Array<{ variant: Variant; caseId: string; flowVersion: number }> = [];
  for (const caseId of state.caseIds) {
    for (const v of state.variants) if (!state.results[resultKey(v.variant, caseId)]) out.push({ variant: v.variant, caseId, flowVersion: v.flowVersion });
  }
  return out;
}

/** An organization's workspace shares its datasets and evaluations; a personal one is its owner's. */
export function evalVisibleTo(owned: { ownerId: string; orgId: string | null; workspaceId: string | null }, scope: EvalScope): boolean {
  if (scope.orgId !== null) return owned.orgId === scope.orgId && owned.workspaceId === scope.workspaceId;
  return owned.orgId === null && owned.ownerId === scope.userId;
}
