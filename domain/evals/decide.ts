import { DomainError } from '../shared/decider.js';
import { EVAL_LIMITS, type CaseResult, type DatasetEvent, type EvalCase, type EvalScope, type EvaluationEvent, type Scorer, type Variant } from './events.js';
import { evalVisibleTo, resultKey, type DatasetState, type EvaluationState } from './state.js';

export type DatasetCommand =
  | { type: 'CreateDataset'; datasetId: string; name: string; description: string; cases: EvalCase[]; ownerId: string; orgId: string | null; workspaceId: string | null; at: string }
  | { type: 'AddCases'; scope: EvalScope; cases: EvalCase[]; at: string }
  | { type: 'EditCase'; scope: EvalScope; caseId: string; input?: Record<string, unknown>; expected?: unknown; at: string }
  | { type: 'RemoveCase'; scope: EvalScope; caseId: string; at: string }
  | { type: 'DeleteDataset'; scope: EvalScope; at: string };

export type EvaluationCommand =
  | {
      type: 'RequestEvaluation'; evaluationId: string; datasetId: string; datasetRevision: number; caseIds: string[]; flowId: string;
      variants: Array<{ variant: Variant; flowVersion: number }>; scorers: Scorer[]; concurrency: number; requestedBy: string;
      ownerId: string; orgId: string | null; workspaceId: string | null; at: string;
    }
  /** `holderDead`: the holder's process is known dead (its worker presence stopped or went silent): no need to wait out the lease. */
  | { type: 'ClaimEvaluation'; runner: string; holderDead?: boolean; at: string }
  | { type: 'RecordCaseResult'; result: CaseResult; at: string }
  | { type: 'CompleteEvaluation'; at: string }
  | { type: 'CancelEvaluation'; scope: EvalScope; at: string }
  | { type: 'FailEvaluation'; code: string; message: string; at: string };

export const datasetNotFound = () => new DomainError('DATASET_NOT_FOUND', 'dataset not found', 'not_found');
export const evaluationNotFound = () => new DomainError('EVALUATION_NOT_FOUND', 'evaluation not found', 'not_found');
const caseNotFound = (caseId: string) => new DomainError('CASE_NOT_FOUND', `the dataset has no case ${caseId}`, 'not_found', { caseId });

/** Bytes of a value's JSON (UTF-8), without `node:` Buffer. */
export const jsonBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value) ?? 'null').length;

function checkCases(cases: EvalCase[], already: number, field: string) {
  if (cases.length > EVAL_LIMITS.casesPerWrite) {
    throw new DomainError('TOO_MANY_CASES', `one write adds at most ${EVAL_LIMITS.casesPerWrite} cases (this one ${cases.length})`, 'invalid', { field, limit: EVAL_LIMITS.casesPerWrite });
  }
  if (already + cases.length > EVAL_LIMITS.casesPerDataset) {
    throw new DomainError('DATASET_FULL', `a dataset holds at most ${EVAL_LIMITS.casesPerDataset} cases`, 'conflict', { limit: EVAL_LIMITS.casesPerDataset, actual: already });
  }
  cases.forEach((c, i) => {
    const size = jsonBytes({ input: c.input, expected: c.expected });
    if (size > EVAL_LIMITS.caseBytes) {
      throw new DomainError('CASE_TOO_LARGE', `a case's input and expected output hold at most ${EVAL_LIMITS.caseBytes} bytes (case ${i}: ${size})`, 'too_large', { field: `${field}.${i}`, limit: EVAL_LIMITS.caseBytes });
    }
  });
  if (jsonBytes(cases) > EVAL_LIMITS.writeBytes) {
    throw new DomainError('PAYLOAD_TOO_LARGE', `one write of cases carries at most ${EVAL_LIMITS.writeBytes} bytes; send fewer at a time`, 'too_large', { field, limit: EVAL_LIMITS.writeBytes });
  }
}

/** Missing, deleted and another tenant's datasets are the same 404. */
function requireDataset(state: DatasetState, scope: EvalScope) {
  if (!state.exists || state.deleted || !evalVisibleTo(state, scope)) throw datasetNotFound();
}

export function decideDataset(command: DatasetCommand, state: DatasetState): DatasetEvent[] {
  const at = command.at;
  if (command.type === 'CreateDataset') {
    if (state.exists) throw new DomainError('DATASET_EXISTS', 'dataset id already used', 'conflict');
    checkCases(command.cases, 0, 'body.cases');
    const { type: _t, cases, ...data } = command;
    const events: DatasetEvent[] = [{ type: 'EvalDatasetCreated', data }];
    if (cases.length > 0) events.push({ type: 'EvalCasesAdded', data: { cases, at } });
    return events;
  }
  requireDataset(state, command.scope);
  switch (command.type) {
    case 'AddCases':
      if (command.cases.length === 0) return [];
      checkCases(command.cases, state.cases.length, 'body.cases');
      return [{ type: 'EvalCasesAdded', data: { cases: command.cases, at } }];
    case 'EditCase': {
      const current = state.cases.find((c) => c.caseId === command.caseId);
      if (!current) throw caseNotFound(command.caseId);
      const input = (command.input ?? current.input) as EvalCase['input'];
      const expected = (command.expected === undefined ? current.expected : command.expected) as EvalCase['expected'];
      if (JSON.stringify(input) === JSON.stringify(current.input) && JSON.stringify(expected) === JSON.stringify(current.expected)) return [];
      checkCases([{ ...current, input, expected }], 0, 'body');
      return [{ type: 'EvalCaseEdited', data: { caseId: command.caseId, input, expected, at } }];
    }
    case 'RemoveCase':
      if (!state.cases.some((c) => c.caseId === command.caseId)) throw caseNotFound(command.caseId);
      return [{ type: 'EvalCaseRemoved', data: { caseId: command.caseId, at } }];
    case 'DeleteDataset':
      return [{ type: 'EvalDatasetDeleted', data: { at } }];
  }
}

export function decideEvaluation(command: EvaluationCommand, state: EvaluationState): EvaluationEvent[] {
  const at = command.at;
  if (command.type === 'RequestEvaluation') {
    if (state.exists) throw new DomainError('EVALUATION_EXISTS', 'evaluation id already used', 'conflict');
    if (command.caseIds.length === 0) throw new DomainError('DATASET_EMPTY', 'the dataset has no cases to evaluate', 'conflict', { field: 'body.datasetId' });
    const { type: _t, ...data } = command;
    return [{ type: 'EvaluationRequested', data }];
  }
  if (!state.exists) throw evaluationNotFound();
  if (command.type === 'CancelEvaluation') {
    if (!evalVisibleTo(state, command.scope)) throw evaluationNotFound();
    if (state.status !== 'running') throw new DomainError('EVALUATION_FINISHED', `the evaluation is ${state.status}`, 'conflict');
    return [{ type: 'EvaluationCancelled', data: { by: command.scope.userId, at } }];
  }
  if (command.type === 'ClaimEvaluation') {
    if (state.status !== 'running') throw new DomainError('EVALUATION_FINISHED', `the evaluation is ${state.status}`, 'conflict');
    if (state.runner === command.runner) return [];
    const idle = Date.parse(at) - Date.parse(state.heartbeatAt);
    if (state.runner !== null && !command.holderDead && idle < EVAL_LIMITS.runnerLeaseMs) throw new DomainError('EVALUATION_CLAIMED', `runner ${state.runner} holds the evaluation`, 'conflict');
    return [{ type: 'EvaluationRunnerClaimed', data: { runner: command.runner, at } }];
  }
  // Recording after the end, or twice, changes nothing: a resumed runner may repeat its last case.
  if (state.status !== 'running') return [];
  switch (command.type) {
    case 'RecordCaseResult': {
      const { result } = command;
      if (state.results[resultKey(result.variant, result.caseId)]) return [];
      if (!state.caseIds.includes(result.caseId) || !state.variants.some((v) => v.variant === result.variant)) {
        throw new DomainError('CASE_NOT_IN_EVALUATION', `case ${result.caseId} (${result.variant}) is not part of the evaluation`, 'invalid');
      }
      return [{ type: 'EvaluationCaseScored', data: { ...result, at } }];
    }
    case 'CompleteEvaluation':
      return [{ type: 'EvaluationCompleted', data: { at } }];
    case 'FailEvaluation':
      return [{ type: 'EvaluationFailed', data: { code: command.code, message: command.message, at } }];
  }
}
