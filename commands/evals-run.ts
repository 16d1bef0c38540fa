import {
  caseOutputOf,
  datasetDecider,
  datasetStreamId,
  EVAL_LIMITS,
  evaluationDecider,
  evaluationStreamId,
  jsonBytes,
  pendingWork,
  progressOf,
  textOf,
  type CaseResult,
  type EvalCase,
  type EvaluationState,
  type Variant,
} from '../domain/evals/index.js';
import type { FlowState } from '../domain/flows/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { LocalWork } from '../ports/local-work.js';
import type { Logger } from '../ports/logger.js';
import { scoreCase, type ScoringPorts } from './evals-scoring.js';
import { claimEvaluation, finishEvaluation, flowAtVersion, recordCaseResult } from './evals.js';
import { loadState, type CommandContext } from './handle.js';
import { startRun, type RunStartPorts } from './runs.js';
import { stateAtRevision } from './snapshots.js';

/**
 * Executes an evaluation in this process: every (case, version) pair not yet recorded is run as a
 * synchronous flow run of that flow version (startRun: the budget check, the run's own stream),
 * scored, and recorded as EvaluationCaseScored; at most `concurrency` at a time. What is recorded
 * is never run again, so a runner started again on the same evaluation (after a restart) goes on
 * where the last one stopped. One runner at a time: each claims the evaluation first
 * (EvaluationRunnerClaimed), and a claim is refused while another runner recorded something within
 * EVAL_LIMITS.runnerLeaseMs (consumers/evals.ts takes over evaluations whose runner died).
 */

export interface EvalRunPorts extends ScoringPorts, RunStartPorts {
  logger: Logger;
}

/** A failure of the whole evaluation (the dataset or a flow version gone), not of one case. */
class EvaluationAbandoned extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

function preview(output: unknown): { output: CaseResult['output']; outputTruncated: boolean } {
  if (jsonBytes(output) <= EVAL_LIMITS.outputPreviewBytes) return { output: (output ?? null) as CaseResult['output'], outputTruncated: false };
  return { output: textOf(output).slice(0, EVAL_LIMITS.outputPreviewBytes / 2), outputTruncated: true };
}

const unscored = (caseId: string, variant: Variant, processId: string | null, status: string, code: string, message: string, latencyMs: number | null, usage = { tokens: 0, cost: 0 }): CaseResult => ({
  caseId, variant, processId, status, output: null, outputTruncated: false, error: { code, message: message.slice(0, 1_000) }, scores: [], pass: false, score: 0,
  latencyMs, tokens: usage.tokens, cost: usage.cost, judgeTokens: 0, judgeCost: 0,
});

async function runCase(ports: EvalRunPorts, context: () => CommandContext, evaluation: EvaluationState, flow: FlowState, item: EvalCase, variant: Variant): Promise<CaseResult> {
  const scope = { userId: evaluation.requestedBy, orgId: evaluation.orgId, workspaceId: evaluation.workspaceId };
  const started = performance.now();
  let run;
  try {
    run = await startRun(
      ports, context(),
      { flowId: evaluation.flowId, mode: 'flow', inputs: item.input, async: false, requestedBy: evaluation.requestedBy, source: 'evaluation', saveToHistory: false, overrideConfig: null, scope },
      { userId: evaluation.requestedBy, idempotencyKey: null },
      flow,
    );
  } catch (err) {
    // Refused before running (BUDGET_EXCEEDED, …): the case's error, not the evaluation's.
    if (!(err instanceof DomainError)) throw err;
    return unscored(item.caseId, variant, null, 'error', err.code, err.message, null);
  }
  const latencyMs = Math.round(performance.now() - started);
  const state = run.state!;
  const usage = { tokens: state.usage.total_tokens, cost: state.usage.cost };
  if (state.status !== 'completed') {
    const failure = state.failure ?? { code: `RUN_${state.status.toUpperCase()}`, reason: `the run is ${state.status}` };
    return unscored(item.caseId, variant, run.processId, state.status, failure.code, failure.reason, latencyMs, usage);
  }
  const output = caseOutputOf(state.outputs);
  const caller = { orgId: evaluation.orgId, userId: evaluation.requestedBy };
  const scored = await scoreCase(ports, context(), caller, evaluation.scorers, { input: item.input, expected: item.expected, output }, `evaluation:${evaluation.evaluationId}:${variant}:${item.caseId}`);
  const score = scored.scores.length ? scored.scores.reduce((s, x) => s + x.score, 0) / scored.scores.length : 0;
  return {
    caseId: item.caseId, variant, processId: run.processId, status: state.status, ...preview(output), error: null,
    scores: scored.scores, pass: scored.scores.every((s) => s.pass), score: Math.round(score * 1e6) / 1e6,
    latencyMs, ...usage, judgeTokens: scored.judgeTokens, judgeCost: scored.judgeCost,
  };
}

/** The cases as the dataset stood when the evaluation was asked for. */
async function casesOf(ports: EvalRunPorts, evaluation: EvaluationState): Promise<Map<string, EvalCase>> {
  const { state } = await stateAtRevision(ports.eventStore, datasetStreamId(evaluation.datasetId), datasetDecider, evaluation.datasetRevision);
  if (!state.exists) throw new EvaluationAbandoned('DATASET_NOT_FOUND', `dataset ${evaluation.datasetId} is gone`);
  return new Map(state.cases.map((c) => [c.caseId, c]));
}

async function flowsOf(ports: EvalRunPorts, evaluation: EvaluationState): Promise<Map<Variant, FlowState>> {
  const flows = new Map<Variant, FlowState>();
  for (const v of evaluation.variants) {
    try {
      flows.set(v.variant, await flowAtVersion(ports.eventStore, evaluation.flowId, v.flowVersion, 'body.version'));
    } catch (err) {
      if (err instanceof DomainError) throw new EvaluationAbandoned(err.code, err.message);
      throw err;
    }
  }
  return flows;
}

/**
 * Runs what is left of the evaluation, then records its end. `signal` stops it between cases
 * (the service stopping); what was recorded stays, and a later runner goes on from there.
 */
export async function runEvaluation(ports: EvalRunPorts, base: CommandContext, evaluationId: string, runner: string, signal: AbortSignal, holderDead = false): Promise<void> {
  const context = () => ({ ...base, now: ports.clock.now() });
  try {
    await claimEvaluation(ports.eventStore, context(), evaluationId, runner, holderDead);
  } catch (err) {
    // Another live runner holds it, or it ended meanwhile: nothing to do here.
    if (err instanceof DomainError && ['EVALUATION_CLAIMED', 'EVALUATION_FINISHED', 'EVALUATION_NOT_FOUND'].includes(err.code)) return;
    throw err;
  }
  const { state: evaluation } = await loadState(ports.eventStore, evaluationStreamId(evaluationId), evaluationDecider);
  if (!evaluation.exists || evaluation.status !== 'running') return;
  try {
    const [cases, flows] = await Promise.all([casesOf(ports, evaluation), flowsOf(ports, evaluation)]);
    const queue = pendingWork(evaluation);
    const worker = async () => {
      for (let next = queue.shift(); next && !signal.aborted; next = queue.shift()) {
        const item = cases.get(next.caseId);
        let result: CaseResult;
        try {
          result = item
            ? await runCase(ports, context, evaluation, flows.get(next.variant)!, item, next.variant)
            : unscored(next.caseId, next.variant, null, 'error', 'CASE_NOT_FOUND', 'the case is not in the dataset revision evaluated', null);
        } catch (err) {
          // Something below the run broke on this case only (a refusal is a DomainError, handled in runCase): the case's error, logged.
          ports.logger.error({ err, evaluationId, caseId: next.caseId }, 'evaluation case failed');
          result = unscored(next.caseId, next.variant, null, 'error', 'CASE_FAILED', (err as Error).message, null);
        }
        const recorded = await recordCaseResult(ports.eventStore, context(), evaluationId, result);
        // Cancelled (or ended by another runner): the queue is dropped for every worker of this runner.
        if (recorded.state.status !== 'running') queue.length = 0;
      }
    };
    await Promise.all(Array.from({ length: Math.min(evaluation.concurrency, Math.max(1, queue.length)) }, worker));
    if (signal.aborted) return;
    const { state: after } = await loadState(ports.eventStore, evaluationStreamId(evaluationId), evaluationDecider);
    const { done, total } = progressOf(after);
    if (done >= total) await finishEvaluation(ports.eventStore, context(), evaluationId);
  } catch (err) {
    if (signal.aborted) return;
    // Anything else (the log unreachable while recording) leaves the evaluation running: this
    // runner still holds it, and the resume sweep launches it again here (same runner) next minute.
    if (!(err instanceof EvaluationAbandoned)) throw err;
    await finishEvaluation(ports.eventStore, context(), evaluationId, { code: err.code, message: err.message.slice(0, 1_000) });
  }
}

/**
 * Starts the evaluation's runner in this service's background (once per evaluation: a second
 * launch while one runs is a no-op), tracked in `work` so the service's stop aborts it.
 */
export function launchEvaluation(ports: EvalRunPorts, work: LocalWork<void>, context: CommandContext, evaluationId: string, runner: string, holderDead = false): void {
  if (work.has(evaluationId)) return;
  const controller = new AbortController();
  const done = runEvaluation(ports, context, evaluationId, runner, controller.signal, holderDead).catch((err) => ports.logger.error({ err, evaluationId }, 'evaluation runner stopped'));
  work.track(evaluationId, { controller, done });
}
