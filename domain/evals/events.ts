import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/** Limits of the evals context (NOTES-evals.md "Limits"): events travel whole through Kafka and EventStoreDB (1 MiB). */
export const EVAL_LIMITS = {
  nameChars: 200,
  descriptionChars: 2_000,
  casesPerDataset: 1_000,
  /** Cases one request adds (a create, an append, an upload). */
  casesPerWrite: 200,
  /** One case's input and expected output, serialized. */
  caseBytes: 64 * 1024,
  /** What one write of cases carries, serialized (under the 1 MiB event maximum). */
  writeBytes: 768 * 1024,
  scorers: 10,
  /** All of an evaluation's scorers, serialized (JSON Schemas and rubrics ride in EvaluationRequested). */
  scorersBytes: 64 * 1024,
  rubricChars: 10_000,
  /** A case's output kept in the evaluation's events; the whole output stays in its run. */
  outputPreviewBytes: 8 * 1024,
  maxConcurrency: 16,
  defaultConcurrency: 4,
  /**
   * A runner holds an evaluation while it records results at least this often; after that another
   * may take it over (the holder died with its process). Longer than a run may last (RUN_TIMEOUT_MS
   * default 10 min), so a live runner on one slow case is not taken over.
   */
  runnerLeaseMs: 15 * 60_000,
} as const;

export const DATASET_CATEGORY = 'evaldataset';
export const EVALUATION_CATEGORY = 'evaluation';
export const datasetStreamId = (datasetId: string) => `${DATASET_CATEGORY}-${datasetId}`;
export const evaluationStreamId = (evaluationId: string) => `${EVALUATION_CATEGORY}-${evaluationId}`;

export const evalIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');

/** Where a case came from: a recorded run (its trigger inputs and output), an upload, or typed in. */
export const caseSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('run'), processId: z.string(), flowId: z.string() }),
  z.object({ kind: z.literal('upload') }),
  z.object({ kind: z.literal('manual') }),
]);
export type CaseSource = z.infer<typeof caseSourceSchema>;

export const evalCaseSchema = z.object({
  caseId: z.string(),
  /** The run's trigger inputs. */
  input: z.record(z.string(), z.json()),
  /** What the flow should answer; null when only the scorers' own rules apply (regex, JSON Schema, judge). */
  expected: z.json().nullable(),
  source: caseSourceSchema,
});
export type EvalCase = z.infer<typeof evalCaseSchema>;

/** Scorers: each gives a score in [0, 1] and a pass; a case passes when all of its scorers pass. */
export const scorerSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('exact'), name: z.string().max(100).optional(), ignoreCase: z.boolean().default(false).describe('strings compared case-insensitively, after trimming') }),
  z.strictObject({ type: z.literal('contains'), name: z.string().max(100).optional(), value: z.string().max(10_000).optional().describe('absent: the expected output as text'), ignoreCase: z.boolean().default(false) }),
  z.strictObject({ type: z.literal('regex'), name: z.string().max(100).optional(), pattern: z.string().min(1).max(1_000).describe('RE2 syntax (no backreferences, no lookaround); unanchored search in the output as text'), options: z.string().regex(/^[ims]{0,3}$/).default('') }),
  z.strictObject({ type: z.literal('jsonSchema'), name: z.string().max(100).optional(), schema: z.record(z.string(), z.json()).describe('a JSON Schema (draft-07) the output must satisfy') }),
  z.strictObject({ type: z.literal('numeric'), name: z.string().max(100).optional(), tolerance: z.number().min(0), relative: z.boolean().default(false).describe('tolerance as a fraction of |expected| rather than an absolute difference') }),
  z.strictObject({
    type: z.literal('judge'), name: z.string().max(100).optional(),
    rubric: z.string().min(1).max(EVAL_LIMITS.rubricChars),
    provider: z.string().max(40).optional().describe("absent: the default model's provider (the gateway's rule)"),
    model: z.string().max(200).optional(),
    passThreshold: z.number().min(0).max(1).default(0.5).describe('a score at or above it passes unless the judge says pass: false'),
  }),
]);
export type Scorer = z.infer<typeof scorerSchema>;

export const scoreSchema = z.object({
  scorer: z.string(),
  score: z.number().min(0).max(1),
  pass: z.boolean(),
  reason: z.string().nullable(),
});
export type Score = z.infer<typeof scoreSchema>;

export const variantSchema = z.enum(['a', 'b']);
export type Variant = z.infer<typeof variantSchema>;

export const caseResultSchema = z.object({
  caseId: z.string(),
  variant: variantSchema,
  processId: z.string().nullable(),
  /** The run's status, or `error` when no run finished (refused: budget, a deleted flow…). */
  status: z.string(),
  output: z.json().nullable(),
  outputTruncated: z.boolean(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  scores: z.array(scoreSchema),
  pass: z.boolean(),
  score: z.number(),
  latencyMs: z.number().nullable(),
  /** The run's tokens and cost; the judge's are apart (they are the evaluation's, not the flow's). */
  tokens: z.number(),
  cost: z.number(),
  judgeTokens: z.number(),
  judgeCost: z.number(),
});
export type CaseResult = z.infer<typeof caseResultSchema>;

const owner = { ownerId: z.string(), orgId: z.string().nullable(), workspaceId: z.string().nullable() };

export const datasetEventSchemas = {
  EvalDatasetCreated: z.object({ datasetId: z.string(), name: z.string().min(1).max(EVAL_LIMITS.nameChars), description: z.string().max(EVAL_LIMITS.descriptionChars), ...owner, at: z.string() }),
  EvalCasesAdded: z.object({ cases: z.array(evalCaseSchema).min(1).max(EVAL_LIMITS.casesPerWrite), at: z.string() }),
  /** The user's edit of a case: its input and expected output as they are now. */
  EvalCaseEdited: z.object({ caseId: z.string(), input: z.record(z.string(), z.json()), expected: z.json().nullable(), at: z.string() }),
  EvalCaseRemoved: z.object({ caseId: z.string(), at: z.string() }),
  EvalDatasetDeleted: z.object({ at: z.string() }),
};
export type DatasetEvent = EventsOf<typeof datasetEventSchemas>;

export const evaluationEventSchemas = {
  /**
   * The cases are not copied: the evaluation names the dataset's revision, and the runner folds
   * the dataset as of it (an edit made meanwhile changes nothing already asked for).
   */
  EvaluationRequested: z.object({
    evaluationId: z.string(),
    datasetId: z.string(),
    datasetRevision: z.number().int(),
    caseIds: z.array(z.string()),
    flowId: z.string(),
    variants: z.array(z.object({ variant: variantSchema, flowVersion: z.number().int() })).min(1).max(2),
    scorers: z.array(scorerSchema).min(1).max(EVAL_LIMITS.scorers),
    concurrency: z.number().int().min(1).max(EVAL_LIMITS.maxConcurrency),
    requestedBy: z.string(),
    ...owner,
    at: z.string(),
  }),
  /** A runner (a service's worker id) took the evaluation on: at the start, or to go on after its holder died. */
  EvaluationRunnerClaimed: z.object({ runner: z.string(), at: z.string() }),
  EvaluationCaseScored: caseResultSchema.extend({ at: z.string() }),
  EvaluationCompleted: z.object({ at: z.string() }),
  /** Stopped by a user: the results recorded stay; runners stop at their next case. */
  EvaluationCancelled: z.object({ by: z.string(), at: z.string() }),
  EvaluationFailed: z.object({ code: z.string(), message: z.string(), at: z.string() }),
};
export type EvaluationEvent = EventsOf<typeof evaluationEventSchemas>;

export interface EvalScope {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}
