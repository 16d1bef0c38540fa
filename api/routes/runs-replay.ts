import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { idSchema, type FlowState } from '../../domain/flows/index.js';
import { flowAtVersion } from './flows-audit.js';
import { isFinished, planReplay, toRunDefinition } from '../../domain/runs/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { runStateView } from '../../projections/runs.js';
import { defineRoute, type RouteInput } from '../route.js';
import { readErrors } from './flows-schemas.js';
import { runnableFlow, runReply, startRun, visibleRun } from './runs.js';

type AnyInput = RouteInput<unknown, unknown, unknown>;

const replayBody = z.strictObject({
  fromNodeId: idSchema.optional().describe('nodes upstream of it reuse their recorded outputs; absent: the whole flow runs again from the trigger inputs'),
  flowVersion: z.number().int().min(0).optional().describe('the flow version to run (GET /flows/{flowId}/versions/{version}); absent: the current one'),
  sideEffects: z.enum(['recorded', 'live']).default('recorded').describe('recorded: webhook, MCP tool and memory nodes answer from the recording (refused when none fits); live: they are called for real'),
  async: z.boolean().optional().describe("absent: as the original run was asked"),
});


/** The flow as of `version` (404 VERSION_NOT_FOUND beyond its stream, 409 VERSION_DELETED when deleted by then), else the current flow. */
async function flowToReplay(input: AnyInput, flowId: string, version: number | undefined): Promise<FlowState> {
  const current = await runnableFlow(input, flowId);
  if (version === undefined) return current;
  const state = await flowAtVersion(input.services.eventStore, flowId, version);
  if (state.deleted) throw new DomainError('VERSION_DELETED', `flow ${flowId} was deleted at version ${version}`, 'conflict', { version });
  return state;
}

/** Replaying a run (issue 33 item 1): a new run of the flow, reusing what the original recorded. */
export const runReplayRoutes = [
  defineRoute({
    method: 'POST',
    path: '/processes/{processId}/replay',
    operationId: 'replayProcess',
    summary:
      "start a new run from a finished one: the same inputs, the flow as of flowVersion (default: now), nodes upstream of fromNodeId answering with the original's recorded outputs, and webhook, MCP tool and memory nodes answering from the recording unless sideEffects is live; the new run names what it replays (process.replay)",
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'edit_resources',
    params: z.strictObject({ processId: idSchema }),
    body: replayBody,
    responses: {
      201: { description: 'the new run: finished (sync, the run as POST /flows/{flowId}/run answers it) or {success, processId, status: queued} (async)', schema: z.looseObject({ success: z.boolean(), processId: z.string(), status: z.string() }) },
      ...readErrors,
      400: { description: 'VALIDATION_FAILED: bad body, or fromNodeId not in the flow version replayed (names the field); FLOW_HAS_NO_NODES at that version' },
      402: { description: 'BUDGET_EXCEEDED: the organization has spent its monthly LLM budget and the run would call a paid provider' },
      404: { description: "PROCESS_NOT_FOUND (unknown or another tenant's run), FLOW_NOT_FOUND (the flow was deleted), VERSION_NOT_FOUND" },
      409: { description: 'RUN_NOT_DONE (the original is still running), RUN_HISTORY_PRUNED (retention removed its outputs), VERSION_DELETED, REPLAY_NO_RECORDING (a node that must answer from the recording has none that fits; details.nodes)' },
    },
    async handler(input) {
      const { params, body, principal } = input;
      const original = await visibleRun(input, params.processId);
      if (!isFinished(original.status)) throw new DomainError('RUN_NOT_DONE', `run ${params.processId} is still ${original.status}`, 'conflict');
      if (original.historyPruned) throw new DomainError('RUN_HISTORY_PRUNED', `run ${params.processId} was cut down to its summary by retention: its node outputs are gone`, 'conflict');
      const flow = await flowToReplay(input, original.flowId, body.flowVersion);
      const nodeId = original.mode === 'node' ? original.nodeId : null;
      const replay = planReplay(original, params.processId, toRunDefinition(flow.nodes, flow.edges, nodeId ?? undefined), { fromNodeId: body.fromNodeId ?? null, sideEffects: body.sideEffects });
      const async = body.async ?? original.async;
      const started = await startRun(
        input,
        {
          flowId: original.flowId, mode: original.mode, nodeId, inputs: original.inputs, async, requestedBy: principal!.userId, source: 'replay',
          saveToHistory: false, overrideConfig: original.overrideConfig, scope: flowScopeOf(principal!), replay,
        },
        flow,
      );
      if (async) return { status: 201, body: { success: true, processId: started.processId, status: 'queued' } };
      return { ...runReply(started.repeated ?? runStateView(started.processId, started.state!)), status: 201 };
    },
  }),
];
