import { expect } from 'chai';
import {
  datasetDecider, evaluationDecider, evaluationReport, evolveEvaluation, initialEvaluationState, parseCasesJsonl, pendingWork, progressOf, readJudgeAnswer, scorePure, scorerLabels,
  type CaseResult, type DatasetEvent, type EvalCase, type EvaluationEvent, type EvaluationState, type PureScorer,
} from '../../domain/evals/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { fold } from '../../domain/shared/decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const me = { userId: 'u1', orgId: null, workspaceId: null };
const other = { userId: 'u2', orgId: null, workspaceId: null };
const aCase = (caseId: string, expected: unknown = 'x'): EvalCase => ({ caseId, input: { n: 1 }, expected: expected as EvalCase['expected'], source: { kind: 'manual' } });

describe('evals: scorers', () => {
  const score = (scorer: Record<string, unknown>, output: unknown, expected: unknown) => scorePure({ ignoreCase: false, options: '', relative: false, ...scorer } as unknown as PureScorer, 's', output, expected);

  it('exact: strings trimmed (case only with ignoreCase), JSON equal whatever the key order', () => {
    expect(score({ type: 'exact' }, ' yes ', 'yes').pass).to.equal(true);
    expect(score({ type: 'exact' }, 'Yes', 'yes').pass).to.equal(false);
    expect(score({ type: 'exact', ignoreCase: true }, 'Yes', 'yes').pass).to.equal(true);
    expect(score({ type: 'exact' }, { a: 1, b: [1, { c: 2, d: 3 }] }, { b: [1, { d: 3, c: 2 }], a: 1 }).pass).to.equal(true);
    expect(score({ type: 'exact' }, { a: 1 }, { a: '1' }).pass).to.equal(false);
  });

  it('contains: the value, else the expected output as text', () => {
    expect(score({ type: 'contains', value: 'cat' }, 'a cat sat', null).pass).to.equal(true);
    expect(score({ type: 'contains' }, 'the answer is 42', 42).pass).to.equal(true);
    expect(score({ type: 'contains', ignoreCase: true, value: 'CAT' }, 'a cat', null).pass).to.equal(true);
    expect(score({ type: 'contains' }, 'x', null)).to.deep.include({ pass: false });
  });

  it('regex: RE2, in the output as text; catastrophic patterns stay linear', () => {
    expect(score({ type: 'regex', pattern: '^\\d{3}$' }, 123, null).pass).to.equal(true);
    expect(score({ type: 'regex', pattern: 'abc', options: 'i' }, 'xABCx', null).pass).to.equal(true);
    const started = Date.now();
    expect(score({ type: 'regex', pattern: '(a+)+$' }, `${'a'.repeat(30_000)}!`, null).pass).to.equal(false);
    expect(Date.now() - started).to.be.lessThan(2_000);
  });

  it('numeric: absolute or relative tolerance; numbers in text count, anything else fails', () => {
    expect(score({ type: 'numeric', tolerance: 0.1 }, 3.05, 3).pass).to.equal(true);
    expect(score({ type: 'numeric', tolerance: 0.1 }, '3.2', 3).pass).to.equal(false);
    expect(score({ type: 'numeric', tolerance: 0.1, relative: true }, 105, 100).pass).to.equal(true);
    expect(score({ type: 'numeric', tolerance: 1 }, 'three', 3)).to.deep.include({ pass: false, reason: 'the output is not a number' });
  });

  it('the judge: the first JSON object of its answer; pass at the threshold unless it says no; unreadable is a failing score', () => {
    expect(readJudgeAnswer('j', 'Sure! ```json\n{"score": 0.8, "reason": "ok"}\n```', 0.5)).to.deep.equal({ scorer: 'j', score: 0.8, pass: true, reason: 'ok' });
    expect(readJudgeAnswer('j', '{"score": 0.8, "pass": false}', 0.5).pass).to.equal(false);
    expect(readJudgeAnswer('j', '{"score": 7}', 0.5).score).to.equal(1);
    expect(readJudgeAnswer('j', '{"score": 0.4, "pass": true}', 0.5).pass).to.equal(false);
    expect(readJudgeAnswer('j', 'I think it is good', 0.5)).to.deep.include({ score: 0, pass: false });
  });

  it('labels: the name, else the type, numbered only when a type repeats unnamed', () => {
    expect(scorerLabels([{ type: 'exact', ignoreCase: false }, { type: 'regex', pattern: 'a', options: '' }, { type: 'regex', pattern: 'b', options: '' }, { type: 'contains', name: 'has b', ignoreCase: false }])).to.deep.equal([
      'exact', 'regex#1', 'regex#2', 'has b',
    ]);
  });
});

describe('evals: JSONL upload', () => {
  it('one case per line, blank lines skipped, expected optional', () => {
    expect(parseCasesJsonl('{"input":{"a":1},"expected":"x"}\n\n{"input":{}}\r\n')).to.deep.equal([{ input: { a: 1 }, expected: 'x' }, { input: {}, expected: null }]);
  });
  it('the first bad line refuses the upload, naming it', () => {
    for (const [text, line] of [['{"input":{}}\nnope', 2], ['[1]', 1], ['{"input":1}', 1], ['{"input":{},"extra":1}', 1], ['', 1]] as const) {
      expect(() => parseCasesJsonl(text)).to.throw(DomainError).with.property('message').that.includes(`line ${line}`);
    }
  });
});

describe('evals: the dataset decider', () => {
  const spec = deciderSpec(datasetDecider);
  const created: DatasetEvent = { type: 'EvalDatasetCreated', data: { datasetId: 'd1', name: 'n', description: '', ownerId: 'u1', orgId: null, workspaceId: null, at } };
  const added: DatasetEvent = { type: 'EvalCasesAdded', data: { cases: [aCase('c1'), aCase('c2')], at } };

  it('creates with its cases; an edit records the case as it is now; an edit changing nothing appends nothing', () => {
    spec.given([]).when({ type: 'CreateDataset', datasetId: 'd1', name: 'n', description: '', cases: [aCase('c1'), aCase('c2')], ownerId: 'u1', orgId: null, workspaceId: null, at }).then([created, added]);
    spec.given([created, added]).when({ type: 'EditCase', scope: me, caseId: 'c1', expected: 'y', at }).then([{ type: 'EvalCaseEdited', data: { caseId: 'c1', input: { n: 1 }, expected: 'y', at } }]);
    spec.given([created, added]).when({ type: 'EditCase', scope: me, caseId: 'c1', expected: 'x', at }).then([]);
  });

  it("another tenant's dataset, a deleted one and an unknown case are refused", () => {
    spec.given([created]).when({ type: 'AddCases', scope: other, cases: [aCase('c3')], at }).thenThrows('DATASET_NOT_FOUND');
    spec.given([created, { type: 'EvalDatasetDeleted', data: { at } }]).when({ type: 'AddCases', scope: me, cases: [aCase('c3')], at }).thenThrows('DATASET_NOT_FOUND');
    spec.given([created, added]).when({ type: 'EditCase', scope: me, caseId: 'nope', expected: 1, at }).thenThrows('CASE_NOT_FOUND');
  });

  it('limits: cases per write, case size', () => {
    const many = Array.from({ length: 201 }, (_, i) => aCase(`c${i}`));
    spec.given([created]).when({ type: 'AddCases', scope: me, cases: many, at }).thenThrows('TOO_MANY_CASES');
    spec.given([created]).when({ type: 'AddCases', scope: me, cases: [aCase('big', 'x'.repeat(70_000))], at }).thenThrows('CASE_TOO_LARGE');
  });
});

describe('evals: the evaluation decider and its report', () => {
  const spec = deciderSpec(evaluationDecider);
  const requested: EvaluationEvent = {
    type: 'EvaluationRequested',
    data: {
      evaluationId: 'e1', datasetId: 'd1', datasetRevision: 1, caseIds: ['c1', 'c2'], flowId: 'f1', variants: [{ variant: 'a', flowVersion: 5 }, { variant: 'b', flowVersion: 3 }],
      scorers: [{ type: 'exact', ignoreCase: false }], concurrency: 2, requestedBy: 'u1', ownerId: 'u1', orgId: null, workspaceId: null, at,
    },
  };
  const result = (caseId: string, variant: 'a' | 'b', pass: boolean, extra: Partial<CaseResult> = {}): CaseResult => ({
    caseId, variant, processId: `p-${variant}-${caseId}`, status: 'completed', output: 'x', outputTruncated: false, error: null,
    scores: [{ scorer: 'exact', score: pass ? 1 : 0, pass, reason: null }], pass, score: pass ? 1 : 0, latencyMs: 10, tokens: 5, cost: 0, judgeTokens: 0, judgeCost: 0, ...extra,
  });
  const scored = (r: CaseResult): EvaluationEvent => ({ type: 'EvaluationCaseScored', data: { ...r, at } });

  it('records each (case, version) once; nothing after the end', () => {
    spec.given([requested]).when({ type: 'RecordCaseResult', result: result('c1', 'a', true), at }).then([scored(result('c1', 'a', true))]);
    spec.given([requested, scored(result('c1', 'a', true))]).when({ type: 'RecordCaseResult', result: result('c1', 'a', false), at }).then([]);
    spec.given([requested, { type: 'EvaluationCompleted', data: { at } }]).when({ type: 'RecordCaseResult', result: result('c2', 'a', true), at }).then([]);
    spec.given([requested]).when({ type: 'RecordCaseResult', result: result('c9', 'a', true), at }).thenThrows('CASE_NOT_IN_EVALUATION');
  });

  it('one runner at a time: a claim is refused while the holder showed life within the lease, taken after it', () => {
    const claimed: EvaluationEvent = { type: 'EvaluationRunnerClaimed', data: { runner: 'r1', at } };
    const later = (minutes: number) => new Date(Date.parse(at) + minutes * 60_000).toISOString();
    spec.given([requested]).when({ type: 'ClaimEvaluation', runner: 'r1', at }).then([claimed]);
    spec.given([requested, claimed]).when({ type: 'ClaimEvaluation', runner: 'r1', at }).then([]);
    spec.given([requested, claimed]).when({ type: 'ClaimEvaluation', runner: 'r2', at: later(14) }).thenThrows('EVALUATION_CLAIMED');
    spec.given([requested, claimed]).when({ type: 'ClaimEvaluation', runner: 'r2', holderDead: true, at: later(1) }).then([{ type: 'EvaluationRunnerClaimed', data: { runner: 'r2', at: later(1) } }]);
    spec.given([requested, claimed]).when({ type: 'ClaimEvaluation', runner: 'r2', at: later(16) }).then([{ type: 'EvaluationRunnerClaimed', data: { runner: 'r2', at: later(16) } }]);
    spec.given([requested, { type: 'EvaluationCompleted', data: { at } }]).when({ type: 'ClaimEvaluation', runner: 'r2', at }).thenThrows('EVALUATION_FINISHED');
  });

  it("cancel: the owner's scope only, while running", () => {
    spec.given([requested]).when({ type: 'CancelEvaluation', scope: other, at }).thenThrows('EVALUATION_NOT_FOUND');
    spec.given([requested]).when({ type: 'CancelEvaluation', scope: me, at }).then([{ type: 'EvaluationCancelled', data: { by: 'u1', at } }]);
    spec.given([requested, { type: 'EvaluationCancelled', data: { by: 'u1', at } }]).when({ type: 'CancelEvaluation', scope: me, at }).thenThrows('EVALUATION_FINISHED');
    spec.given([requested, { type: 'EvaluationCancelled', data: { by: 'u1', at } }]).when({ type: 'RecordCaseResult', result: result('c1', 'a', true), at }).then([]);
  });

  it('an empty dataset is refused', () => {
    spec.given([]).when({ ...requested.data, type: 'RequestEvaluation', caseIds: [] } as never).thenThrows('DATASET_EMPTY');
  });

  it('progress, the work left (what a resumed runner does), and the report with the differences (a minus b)', () => {
    const events: EvaluationEvent[] = [requested, scored(result('c1', 'a', true, { latencyMs: 30 })), scored(result('c1', 'b', false)), scored(result('c2', 'a', false, { error: { code: 'BUDGET_EXCEEDED', message: 'spent' }, processId: null, latencyMs: null, tokens: 0 }))];
    const state = fold(evolveEvaluation, initialEvaluationState, events as never) as EvaluationState;
    expect(progressOf(state)).to.deep.equal({ done: 3, total: 4 });
    expect(pendingWork(state)).to.deep.equal([{ variant: 'b', caseId: 'c2', flowVersion: 3 }]);
    const full = evolveEvaluation(state, scored(result('c2', 'b', true)));
    const report = evaluationReport(full);
    expect(report.summaries[0]).to.deep.include({ variant: 'a', cases: 2, passed: 1, errored: 1, passRate: 0.5, meanScore: 0.5, tokens: 5, latencyMs: { mean: 30, p50: 30, p95: 30 } });
    expect(report.summaries[1]).to.deep.include({ variant: 'b', passed: 1, passRate: 0.5 });
    expect(report.cases.map((c) => [c.caseId, c.change, c.scoreDelta])).to.deep.equal([['c1', 'improved', 1], ['c2', 'regressed', -1]]);
    expect(report.differences).to.deep.include({ passRate: 0, improved: ['c1'], regressed: ['c2'], tokens: -5 });
  });
});
