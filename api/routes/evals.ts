import { z } from 'zod';
import { cancelEvaluation, flowAtVersion, requestEvaluation, visibleDataset, visibleEvaluation } from '../../commands/evals.js';
import { launchEvaluation } from '../../commands/evals-run.js';
import { isProviderId, jsonSchemaProblem } from '../../commands/evals-scoring.js';
import { EVAL_LIMITS, evalIdSchema, jsonBytes, evaluationReport, evaluationStreamId, progressOf, regexProblem, scorerSchema, type EvaluationState, type Scorer } from '../../domain/evals/index.js';
import { idSchema } from '../../domain/flows/index.js';
import type { Services } from '../../ports/services.js';
import { listEvaluations, type EvaluationDoc } from '../../projections/evals.js';
import { ValidationError } from '../errors.js';
import { defineRoute, type RouteInput } from '../route.js';
import { evalDatasetRoutes, evalScopeOf, evalsTag } from './evals-datasets.js';
import { pageQuery, pageReply } from './pagination.js';
import { runnableFlow } from './runs.js';

/**
 * Evaluations (issue 33 item 4): a flow version, or two side by side, run over a dataset's cases
 * and scored; executed by this service in the background (commands/evals-run.ts), progress and
 * report read from the evaluation's stream.
 */

type AnyInput = RouteInput<any, any, any>;
const auth = 'bearer' as const;

const evaluationBody = z.strictObject({
  datasetId: evalIdSchema,
  flowId: idSchema,
  version: z.number().int().min(0).optional().describe('the flow version evaluated (variant a); absent: the current one'),
  against: z.number().int().min(0).optional().describe('a second version run side by side as the baseline (variant b); the report gives a minus b'),
  scorers: z.array(scorerSchema).min(1).max(EVAL_LIMITS.scorers),
  concurrency: z.number().int().min(1).max(EVAL_LIMITS.maxConcurrency).default(EVAL_LIMITS.defaultConcurrency).describe('cases run at the same time'),
});

const scoreOut = z.object({ scorer: z.string(), score: z.number(), pass: z.boolean(), reason: z.string().nullable() });
const resultOut = z.object({
  processId: z.string().nullable(), status: z.string(), output: z.unknown(), outputTruncated: z.boolean(), error: z.object({ code: z.string(), message: z.string() }).nullable(),
  scores: z.array(scoreOut), pass: z.boolean(), score: z.number(), latencyMs: z.number().nullable(), tokens: z.number(), cost: z.number(), judgeTokens: z.number(), judgeCost: z.number(),
});
const summaryOut = z.object({
  variant: z.enum(['a', 'b']), flowVersion: z.number().int(), cases: z.number().int(), passed: z.number().int(), failed: z.number().int(), errored: z.number().int(),
  passRate: z.number(), meanScore: z.number(), latencyMs: z.object({ mean: z.number().nullable(), p50: z.number().nullable(), p95: z.number().nullable() }),
  tokens: z.number(), cost: z.number(), judgeTokens: z.number(), judgeCost: z.number(),
});
const versionsOut = z.array(z.object({ variant: z.enum(['a', 'b']), flowVersion: z.number().int() }));
const progressOut = z.object({ done: z.number().int(), total: z.number().int() });
const evaluationSummary = z.object({
  id: z.string(), status: z.enum(['running', 'completed', 'failed', 'cancelled']), datasetId: z.string(), flowId: z.string(), versions: versionsOut, progress: progressOut,
  passed: z.record(z.string(), z.number().int()).describe('passed cases per variant so far'), requestedAt: z.string(), finishedAt: z.string().nullable(),
});
const evaluationReply = z.object({
  success: z.literal(true),
  evaluation: evaluationSummary.omit({ passed: true }).extend({
    datasetRevision: z.number().int(), scorers: z.array(z.looseObject({ type: z.string() })), concurrency: z.number().int(),
    failure: z.object({ code: z.string(), message: z.string() }).nullable(),
    summaries: z.array(summaryOut).describe('per version: pass rate, mean score, latency, tokens and cost of the runs, and what the judge used'),
    differences: z.object({
      passRate: z.number(), meanScore: z.number(), latencyMeanMs: z.number().nullable(), tokens: z.number(), cost: z.number(),
      improved: z.array(z.string()), regressed: z.array(z.string()), scoreChanged: z.array(z.string()),
    }).nullable().describe('with two versions: the evaluated one (a) minus the baseline (b); improved/regressed name cases'),
    cases: z.array(z.object({ caseId: z.string(), a: resultOut.nullable(), b: resultOut.nullable(), change: z.enum(['improved', 'regressed', 'same', 'score_changed']).nullable(), scoreDelta: z.number().nullable() })),
  }),
});
const errors = { 401: { description: 'UNAUTHENTICATED' }, 403: { description: 'FORBIDDEN: the credential lacks the permission' }, 404: { description: "EVALUATION_NOT_FOUND (missing or another tenant's)" } };

function evaluationView(state: EvaluationState) {
  const report = evaluationReport(state);
  const strip = <T extends { caseId: string; variant: string }>(r: T | null) => {
    if (!r) return null;
    const { caseId: _c, variant: _v, ...rest } = r;
    return rest;
  };
  return {
    id: state.evaluationId, status: state.status, datasetId: state.datasetId, datasetRevision: state.datasetRevision, flowId: state.flowId, versions: state.variants,
    scorers: state.scorers, concurrency: state.concurrency, progress: progressOf(state), failure: state.failure, requestedAt: state.requestedAt, finishedAt: state.finishedAt,
    summaries: report.summaries, differences: report.differences, cases: report.cases.map((c) => ({ ...c, a: strip(c.a), b: strip(c.b) })),
  };
}
const summaryOf = (d: EvaluationDoc) => ({
  id: d._id, status: d.status, datasetId: d.datasetId, flowId: d.flowId, versions: d.versions, progress: { done: d.done, total: d.total }, passed: d.passed, requestedAt: d.requestedAt, finishedAt: d.finishedAt,
});

/** Scorers checked before anything runs: a bad pattern, schema or provider is the request's fault (400 naming it). */
function checkScorers(scorers: Scorer[]) {
  const fields: Array<{ field: string; message: string }> = [];
  if (jsonBytes(scorers) > EVAL_LIMITS.scorersBytes) fields.push({ field: 'body.scorers', message: `the scorers hold at most ${EVAL_LIMITS.scorersBytes} bytes as JSON` });
  scorers.forEach((s, i) => {
    const regex = regexProblem(s);
    if (regex) fields.push({ field: `body.scorers.${i}.pattern`, message: regex });
    if (s.type === 'jsonSchema') {
      const problem = jsonSchemaProblem(s.schema);
      if (problem) fields.push({ field: `body.scorers.${i}.schema`, message: problem });
    }
    if (s.type === 'judge' && s.provider !== undefined && !isProviderId(s.provider)) fields.push({ field: `body.scorers.${i}.provider`, message: `unknown provider ${s.provider}` });
  });
  if (fields.length) throw new ValidationError(fields);
}

export function evalRunPorts(services: Services) {
  return { eventStore: services.eventStore, runs: services.runs, newId: services.newId, settings: services.config, llm: services.llm, clock: { now: services.now }, logger: services.logger };
}

export const evalRoutes = [
  ...evalDatasetRoutes,
  defineRoute({
    method: 'POST', path: '/evals/evaluations', operationId: 'startEvaluation', tag: evalsTag, auth, permission: 'edit_resources',
    summary: 'evaluate a flow version (or two side by side, `against`) over a dataset with scorers (exact, contains, regex, jsonSchema, numeric, judge); runs in the background, concurrently, within the organization\'s budget; poll GET /evals/evaluations/{evaluationId}',
    body: evaluationBody,
    responses: {
      202: { description: 'asked for; the evaluation as it starts', schema: evaluationReply },
      400: { description: 'VALIDATION_FAILED naming the field (a scorer\'s pattern, schema or provider; against equal to version)' },
      401: errors[401], 403: errors[403],
      404: { description: 'DATASET_NOT_FOUND, FLOW_NOT_FOUND, VERSION_NOT_FOUND (details.field)' },
      409: { description: 'DATASET_EMPTY, VERSION_DELETED' },
    },
    async handler(input) {
      const { body, services } = input;
      const scope = evalScopeOf(input);
      checkScorers(body.scorers);
      const dataset = await visibleDataset(services.eventStore, scope, body.datasetId);
      const flow = await runnableFlow(input, body.flowId);
      const version = body.version ?? flow.version;
      if (body.against !== undefined && body.against === version) throw new ValidationError([{ field: 'body.against', message: 'must differ from the version evaluated' }]);
      await flowAtVersion(services.eventStore, body.flowId, version, 'body.version');
      if (body.against !== undefined) await flowAtVersion(services.eventStore, body.flowId, body.against, 'body.against');
      const evaluationId = services.newId();
      const written = await requestEvaluation(services.eventStore, input.command, scope, {
        evaluationId, flowId: body.flowId, scorers: body.scorers, concurrency: body.concurrency,
        dataset: { datasetId: body.datasetId, revision: dataset.revision, caseIds: dataset.state.cases.map((c) => c.caseId) },
        variants: [{ variant: 'a', flowVersion: version }, ...(body.against !== undefined ? [{ variant: 'b' as const, flowVersion: body.against }] : [])],
      });
      launchEvaluation(evalRunPorts(services), services.evaluations, input.command, evaluationId, services.runs.localWorkerId);
      await input.settle(written.position, evaluationStreamId(evaluationId));
      return { status: 202, body: { success: true, evaluation: evaluationView(written.state) } };
    },
  }),
  defineRoute({
    method: 'GET', path: '/evals/evaluations', operationId: 'listEvaluations', tag: evalsTag, auth, permission: 'view_resources',
    summary: "the active workspace's evaluations, oldest first, with their progress (?datasetId= for one dataset's)",
    query: pageQuery.extend({ datasetId: evalIdSchema.optional() }),
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(evaluationSummary), nextCursor: z.string().nullable() }) }, 401: errors[401], 403: errors[403] },
    async handler(input) {
      const { query } = input;
      const page = await listEvaluations(input.services.readStore, evalScopeOf(input), { limit: query.limit, cursor: query.cursor ?? null, datasetId: query.datasetId });
      return pageReply(page, summaryOf);
    },
  }),
  defineRoute({
    method: 'POST', path: '/evals/evaluations/{evaluationId}/cancel', operationId: 'cancelEvaluation', tag: evalsTag, auth, permission: 'edit_resources',
    summary: 'stop a running evaluation: the results recorded stay in its report; no further case starts (one already running finishes and is not recorded)',
    params: z.strictObject({ evaluationId: evalIdSchema }),
    responses: { 200: { description: 'the evaluation, cancelled', schema: evaluationReply }, ...errors, 409: { description: 'EVALUATION_FINISHED: it already ended' } },
    async handler(input) {
      const { services, params } = input;
      const written = await cancelEvaluation(services.eventStore, input.command, evalScopeOf(input), params.evaluationId);
      // The runner here stops at once; one in another process stops at its next result.
      services.evaluations.get(params.evaluationId)?.controller.abort();
      await input.settle(written.position, evaluationStreamId(params.evaluationId));
      return { status: 200, body: { success: true, evaluation: evaluationView(written.state) } };
    },
  }),
  defineRoute({
    method: 'GET', path: '/evals/evaluations/{evaluationId}', operationId: 'getEvaluation', tag: evalsTag, auth, permission: 'view_resources',
    summary: 'an evaluation: its progress while it runs, then the report: per case (each version\'s output, scores, latency, tokens, cost; what changed between versions) and per version (pass rate, mean score, latency, tokens, cost), and the differences',
    params: z.strictObject({ evaluationId: evalIdSchema }),
    responses: { 200: { description: 'the evaluation and its report', schema: evaluationReply }, ...errors },
    async handler(input) {
      const { state } = await visibleEvaluation(input.services.eventStore, evalScopeOf(input), input.params.evaluationId);
      return { status: 200, body: { success: true, evaluation: evaluationView(state) } };
    },
  }),
];
