import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { loadRun } from '../../commands/runs.js';
import { idSchema, isVisibleTo } from '../../domain/flows/index.js';
import { diffRuns } from '../../domain/runs/diff.js';
import { DomainError } from '../../domain/shared/decider.js';
import { defineRoute, type RouteInput } from '../route.js';
import { readErrors } from './flows-schemas.js';

const patchSchema = z.array(z.looseObject({ op: z.string(), path: z.string() })).describe('RFC 6902 JSON Patch operations turning run a\'s value into run b\'s; empty when equal');
const sideSchema = z.object({ status: z.string(), durationMs: z.number().nullable(), tokens: z.number(), cost: z.number() });
const diffReply = z.object({
  success: z.literal(true),
  a: z.object({ processId: z.string(), flowId: z.string(), flowVersion: z.number(), status: z.string() }),
  b: z.object({ processId: z.string(), flowId: z.string(), flowVersion: z.number(), status: z.string() }),
  inputs: patchSchema,
  nodes: z.array(
    z.object({
      nodeId: z.string(),
      nodeType: z.string().nullable(),
      change: z.enum(['added', 'removed', 'changed', 'same']),
      a: sideSchema.nullable(),
      b: sideSchema.nullable(),
      input: patchSchema.describe("what fed the node (the run's inputs, the outputs of the nodes with an edge into it), a → b"),
      output: patchSchema,
      definition: patchSchema.describe("the node's settings (secrets masked), a → b"),
    }),
  ),
  definition: z.object({ nodesAdded: z.array(z.string()), nodesRemoved: z.array(z.string()), nodesChanged: z.array(z.string()), edgesAdded: z.array(z.string()), edgesRemoved: z.array(z.string()) }),
  totals: z.object({ a: sideSchema, b: sideSchema }),
});

const processNotFound = (processId: string) => new DomainError('PROCESS_NOT_FOUND', 'process not found', 'not_found', { processId });

async function visibleRun(input: RouteInput<unknown, unknown, unknown>, processId: string) {
  const run = await loadRun(input.services.eventStore, processId);
  if (!run.exists || !isVisibleTo(run, flowScopeOf(input.principal!))) throw processNotFound(processId);
  if (run.historyPruned) {
    throw new DomainError('RUN_HISTORY_PRUNED', `run ${processId} was cut down to its summary by retention (${run.historyPruned.reason}): its node outputs are gone`, 'conflict', { processId });
  }
  return run;
}

/** Comparing two runs (issue 33 item 2), from their streams: a run just finished is already there. */
export const runDiffRoutes = [
  defineRoute({
    method: 'GET',
    path: '/processes/{processId}/diff/{otherProcessId}',
    operationId: 'diffProcesses',
    summary:
      'compare two runs node by node (matched by node id; added and removed nodes named): status, duration, tokens and cost side by side, input, output and settings as JSON Patch from the first run to the second, and the flow-definition differences',
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'view_resources',
    params: z.strictObject({ processId: idSchema, otherProcessId: idSchema }),
    responses: {
      200: { description: 'the differences', schema: diffReply },
      ...readErrors,
      404: { description: "PROCESS_NOT_FOUND: either run is unknown or another tenant's (details.processId names which)" },
      409: { description: 'RUN_HISTORY_PRUNED: retention cut a run down to its summary; its node outputs are gone' },
    },
    async handler(input) {
      const a = await visibleRun(input, input.params.processId);
      const b = await visibleRun(input, input.params.otherProcessId);
      const head = (id: string, r: typeof a) => ({ processId: id, flowId: r.flowId, flowVersion: r.flowVersion, status: r.status });
      return { status: 200, body: { success: true, a: head(input.params.processId, a), b: head(input.params.otherProcessId, b), ...diffRuns(a, b) } };
    },
  }),
];
