import { z } from 'zod';
import { requireTriggerKey } from '../middleware/trigger-key.js';
import { defineRoute } from '../route.js';
import { flowParams, nodeParams } from './flows-schemas.js';
import { processNodeReply, queuedReply, replyFor, runnableNode, runReplySchema, startRun } from './runs.js';

const triggerQuery = z.strictObject({ async: z.enum(['true', 'false']).optional() });
const triggerBody = z.record(z.string(), z.json()).optional();
const errors = {
  401: { description: 'INVALID_TRIGGER_KEY: missing or wrong X-Trigger-Key (also for an unknown flow or node)' },
  402: { description: "BUDGET_EXCEEDED: the flow's organization has spent its monthly LLM budget and the run would call a paid provider" },
  403: { description: 'TRIGGER_DISABLED' },
  404: { description: 'FLOW_NOT_FOUND or NODE_NOT_FOUND (only with a valid key)' },
  405: { description: 'TRIGGER_METHOD_NOT_ALLOWED' },
};

/** Public triggers: the X-Trigger-Key proves access; the body becomes the run's inputs. */
export const publicTriggerRoutes = [
  defineRoute({
    method: 'POST',
    path: '/public/flows/{flowId}/trigger',
    operationId: 'triggerFlow',
    summary: "run a flow through its public trigger (X-Trigger-Key); body = the run's inputs; ?async=true answers 202",
    tag: 'Triggers',
    auth: 'none',
    params: flowParams,
    query: triggerQuery,
    body: triggerBody,
    responses: { 200: { description: 'the finished run', schema: runReplySchema }, 202: { description: 'queued', schema: queuedReply }, ...errors, 504: { description: 'RUN_TIMED_OUT: the run passed RUN_TIMEOUT_MS' } },
    async handler(input) {
      const { flow } = await requireTriggerKey(input.services, input.koa, input.params.flowId, null);
      const async = input.query.async === 'true';
      // The flow the key was checked on, folded from its stream moments ago: the run snapshots it.
      const started = await startRun(input, { flowId: flow.id, mode: 'flow', inputs: input.body ?? {}, async, requestedBy: null, source: 'trigger', scope: null }, flow);
      return replyFor(started, 'flow', null, async);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/public/flows/{flowId}/nodes/{nodeId}/trigger',
    operationId: 'triggerNode',
    summary: "run one node through its public trigger (X-Trigger-Key); body = the run's inputs; ?async=true answers 202",
    tag: 'Triggers',
    auth: 'none',
    params: nodeParams,
    query: triggerQuery,
    body: triggerBody,
    responses: {
      200: { description: 'the node result (as POST /flows/{flowId}/nodes/{nodeId}/process)', schema: processNodeReply },
      202: { description: 'queued', schema: queuedReply },
      ...errors,
      400: { description: 'WORKFLOW_ONLY_NODE: the node is a workflow kind (wait_signal, sleep, set_state, continue_as_new, query) and runs only inside a workflow' },
      409: { description: 'RUN_NOT_COMPLETED: the run was stopped before the node completed' },
      500: { description: "the node failed: the provider's error code and message" },
      504: { description: 'RUN_TIMED_OUT: the run passed RUN_TIMEOUT_MS' } },
    async handler(input) {
      const { flow } = await requireTriggerKey(input.services, input.koa, input.params.flowId, input.params.nodeId);
      runnableNode(flow, input.params.nodeId);
      const async = input.query.async === 'true';
      const started = await startRun(input, { flowId: flow.id, mode: 'node', nodeId: input.params.nodeId, inputs: input.body ?? {}, async, requestedBy: null, source: 'trigger', scope: null }, flow);
      return replyFor(started, 'node', input.params.nodeId, async);
    },
  }),
];
