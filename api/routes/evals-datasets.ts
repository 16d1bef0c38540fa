import { z } from 'zod';
import { addCases, casesFromRuns, createDataset, deleteDataset, editCase, removeCase, visibleDataset, type CaseDraft } from '../../commands/evals.js';
import { datasetStreamId, EVAL_LIMITS, evalIdSchema, parseCasesJsonl, type DatasetState, type EvalScope } from '../../domain/evals/index.js';
import { idSchema } from '../../domain/flows/index.js';
import { listDatasets, type DatasetDoc } from '../../projections/evals.js';
import { defineRoute, type RouteInput } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';

/**
 * Datasets of the evals context (issue 33 item 4): cases built from recorded runs (their trigger
 * inputs, their output as the expected one, which the user may edit), uploaded as JSON Lines, or
 * typed in. One stream per dataset; GET of one folds it (read-your-writes), the list is projected.
 */

type AnyInput = RouteInput<any, any, any>;

export const evalsTag = 'Evaluations';
const auth = 'bearer' as const;
export const evalScopeOf = (input: AnyInput): EvalScope => ({ userId: input.principal!.userId, orgId: input.principal!.orgId, workspaceId: input.principal!.workspaceId });

const datasetParams = z.strictObject({ datasetId: evalIdSchema });
const caseParams = datasetParams.extend({ caseId: z.string().min(1).max(64) });

const caseIn = z.strictObject({
  input: z.record(z.string(), z.json()).describe("the run's trigger inputs"),
  expected: z.json().optional().describe('what the flow should answer; absent: null (only rule-based scorers and the judge apply)'),
});
/** Where the cases of a write come from: any mix of the three. */
const casesIn = {
  cases: z.array(caseIn).max(EVAL_LIMITS.casesPerWrite).optional(),
  fromRuns: z.array(idSchema).max(EVAL_LIMITS.casesPerWrite).optional().describe("recorded runs (processIds): each gives a case of its inputs, its output as the expected one"),
  jsonl: z.string().max(EVAL_LIMITS.writeBytes).optional().describe('JSON Lines, one {"input": {...}, "expected": ...} per line'),
};
const createBody = z.strictObject({ name: z.string().trim().min(1).max(EVAL_LIMITS.nameChars), description: z.string().max(EVAL_LIMITS.descriptionChars).default(''), ...casesIn });
const addBody = z.strictObject(casesIn).refine((b) => b.cases?.length || b.fromRuns?.length || b.jsonl, { message: 'give cases, fromRuns or jsonl', path: ['cases'] });
const editBody = z.strictObject({ input: caseIn.shape.input.optional(), expected: z.json().optional().describe('null clears it') })
  .refine((b) => b.input !== undefined || b.expected !== undefined, { message: 'give input or expected', path: ['expected'] });

const caseOut = z.object({
  id: z.string(),
  input: z.record(z.string(), z.unknown()),
  expected: z.unknown(),
  source: z.object({ kind: z.enum(['run', 'upload', 'manual']), processId: z.string().optional(), flowId: z.string().optional() }),
});
const datasetSummary = z.object({ id: z.string(), name: z.string(), description: z.string(), caseCount: z.number().int(), ownerId: z.string(), createdAt: z.string(), updatedAt: z.string(), version: z.number().int() });
const datasetReply = z.object({ success: z.literal(true), dataset: datasetSummary.extend({ cases: z.array(caseOut) }) });
const errors = { 401: { description: 'UNAUTHENTICATED' }, 403: { description: 'FORBIDDEN: the credential lacks the permission' }, 404: { description: "DATASET_NOT_FOUND (missing, deleted or another tenant's)" } };
const writeErrors = {
  ...errors,
  400: { description: 'VALIDATION_FAILED naming the field (a bad JSONL line: body.jsonl with its line number), TOO_MANY_CASES' },
  404: { description: "DATASET_NOT_FOUND, CASE_NOT_FOUND, PROCESS_NOT_FOUND (a run in fromRuns unknown or another tenant's; details.processId)" },
  409: { description: 'RUN_NOT_DONE, RUN_HISTORY_PRUNED (a run in fromRuns), DATASET_FULL' },
  413: { description: 'CASE_TOO_LARGE, PAYLOAD_TOO_LARGE' },
};

function datasetView(state: DatasetState, revision: number) {
  return {
    id: state.datasetId, name: state.name, description: state.description, caseCount: state.cases.length, ownerId: state.ownerId, createdAt: state.createdAt, updatedAt: state.updatedAt, version: revision,
    cases: state.cases.map((c) => ({ id: c.caseId, input: c.input, expected: c.expected, source: c.source })),
  };
}
const summaryOf = (d: DatasetDoc) => ({ id: d._id, name: d.name, description: d.description, caseCount: d.caseCount, ownerId: d.ownerId, createdAt: d.createdAt, updatedAt: d.updatedAt, version: d.version });

/** The cases a write carries, from its three sources in order: typed in, recorded runs, JSONL. */
async function draftsOf(input: AnyInput, body: { cases?: z.infer<typeof caseIn>[]; fromRuns?: string[]; jsonl?: string }): Promise<CaseDraft[]> {
  const typed: CaseDraft[] = (body.cases ?? []).map((c) => ({ input: c.input, expected: c.expected ?? null, source: { kind: 'manual' } }));
  const fromRuns = body.fromRuns?.length ? await casesFromRuns(input.services.eventStore, evalScopeOf(input), body.fromRuns) : [];
  const uploaded: CaseDraft[] = body.jsonl !== undefined ? parseCasesJsonl(body.jsonl).map((c) => ({ ...c, source: { kind: 'upload' } })) : [];
  return [...typed, ...fromRuns, ...uploaded];
}

/** Read-your-writes for the list, then the dataset as its stream now folds. */
async function answer(input: AnyInput, datasetId: string, written: { position: number | null }, status = 200) {
  await input.settle(written.position, datasetStreamId(datasetId));
  const { state, revision } = await visibleDataset(input.services.eventStore, evalScopeOf(input), datasetId);
  return { status, body: { success: true, dataset: datasetView(state, revision) } };
}

export const evalDatasetRoutes = [
  defineRoute({
    method: 'POST', path: '/evals/datasets', operationId: 'createEvalDataset', tag: evalsTag, auth, permission: 'edit_resources',
    summary: 'create a dataset of cases: typed in (cases), from recorded runs (fromRuns: their inputs, their output as the expected one) and/or uploaded as JSON Lines (jsonl)',
    body: createBody,
    responses: { 201: { description: 'the dataset with its cases', schema: datasetReply }, ...writeErrors },
    async handler(input) {
      const { body, services } = input;
      const datasetId = services.newId();
      const written = await createDataset(services.eventStore, input.command, evalScopeOf(input), { datasetId, name: body.name, description: body.description, cases: await draftsOf(input, body) }, services.newId);
      return answer(input, datasetId, written, 201);
    },
  }),
  defineRoute({
    method: 'GET', path: '/evals/datasets', operationId: 'listEvalDatasets', tag: evalsTag, auth, permission: 'view_resources',
    summary: "the active workspace's datasets, oldest first (without their cases)",
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(datasetSummary), nextCursor: z.string().nullable() }) }, 401: errors[401], 403: errors[403] },
    async handler(input) {
      const page = await listDatasets(input.services.readStore, evalScopeOf(input), { limit: input.query.limit, cursor: input.query.cursor ?? null });
      return pageReply(page, summaryOf);
    },
  }),
  defineRoute({
    method: 'GET', path: '/evals/datasets/{datasetId}', operationId: 'getEvalDataset', tag: evalsTag, auth, permission: 'view_resources',
    summary: 'a dataset with its cases', params: datasetParams,
    responses: { 200: { description: 'the dataset', schema: datasetReply }, ...errors },
    async handler(input) {
      const { state, revision } = await visibleDataset(input.services.eventStore, evalScopeOf(input), input.params.datasetId);
      return { status: 200, body: { success: true, dataset: datasetView(state, revision) } };
    },
  }),
  defineRoute({
    method: 'POST', path: '/evals/datasets/{datasetId}/cases', operationId: 'addEvalCases', tag: evalsTag, auth, permission: 'edit_resources',
    summary: 'add cases to a dataset (typed in, from recorded runs, or JSON Lines)', params: datasetParams, body: addBody,
    responses: { 200: { description: 'the dataset with its cases', schema: datasetReply }, ...writeErrors },
    async handler(input) {
      const { services, params } = input;
      const written = await addCases(services.eventStore, input.command, evalScopeOf(input), params.datasetId, await draftsOf(input, input.body), services.newId);
      return answer(input, params.datasetId, written);
    },
  }),
  defineRoute({
    method: 'PATCH', path: '/evals/datasets/{datasetId}/cases/{caseId}', operationId: 'editEvalCase', tag: evalsTag, auth, permission: 'edit_resources',
    summary: "edit a case's input and/or expected output (a case from a run starts with the run's output as the expected one)", params: caseParams, body: editBody,
    responses: { 200: { description: 'the dataset with its cases', schema: datasetReply }, ...writeErrors },
    async handler(input) {
      const { params, body } = input;
      const written = await editCase(input.services.eventStore, input.command, evalScopeOf(input), params.datasetId, params.caseId, { input: body.input, expected: body.expected });
      return answer(input, params.datasetId, written);
    },
  }),
  defineRoute({
    method: 'DELETE', path: '/evals/datasets/{datasetId}/cases/{caseId}', operationId: 'removeEvalCase', tag: evalsTag, auth, permission: 'edit_resources',
    summary: 'remove a case from a dataset', params: caseParams,
    responses: { 200: { description: 'the dataset with its cases', schema: datasetReply }, ...errors },
    async handler(input) {
      const written = await removeCase(input.services.eventStore, input.command, evalScopeOf(input), input.params.datasetId, input.params.caseId);
      return answer(input, input.params.datasetId, written);
    },
  }),
  defineRoute({
    method: 'DELETE', path: '/evals/datasets/{datasetId}', operationId: 'deleteEvalDataset', tag: evalsTag, auth, permission: 'edit_resources',
    summary: 'delete a dataset (its evaluations stay readable; they name the revision they ran)', params: datasetParams,
    responses: { 200: { description: 'deleted', schema: z.object({ success: z.literal(true) }) }, ...errors },
    async handler(input) {
      const written = await deleteDataset(input.services.eventStore, input.command, evalScopeOf(input), input.params.datasetId);
      await input.settle(written.position, datasetStreamId(input.params.datasetId));
      return { status: 200, body: { success: true } };
    },
  }),
];
