import { z } from 'zod';
import { TRIGGER_METHODS, idSchema, nodeTriggerOf, toTriggerView, triggerSettingsShape } from '../../domain/flows/index.js';
import { generateTriggerKey } from '../middleware/trigger-key.js';
import { defineRoute } from '../route.js';
import { etagOf, writeFlow } from './flows.js';

/**
 * Trigger settings of a flow and of its nodes, and their keys. A key is shown once, in the
 * answer of its regeneration; only its sha256 goes into the event. The answer waits for the read
 * model (read-your-writes), so the old key is refused from the moment the client has the new one.
 * The public trigger routes that use the key belong to the execution context
 * (api/middleware/trigger-key.ts holds their check).
 */

const flowParams = z.strictObject({ flowId: idSchema });
const nodeParams = z.strictObject({ flowId: idSchema, nodeId: idSchema });

const settingsBody = z
  .strictObject(triggerSettingsShape)
  .partial()
  .refine((b) => Object.keys(b).length > 0, 'give at least one of enabled, allowedMethods, inputSchema');

const triggerSchema = z.object({
  enabled: z.boolean(),
  allowedMethods: z.array(z.enum(TRIGGER_METHODS)),
  inputSchema: z.record(z.string(), z.unknown()).nullable(),
  hasKey: z.boolean(),
  keyCreatedAt: z.string().nullable(),
});
const keySchema = z.object({ success: z.literal(true), key: z.string(), keyCreatedAt: z.string() });

const common = { tag: 'Triggers', auth: 'bearer' as const, permission: 'edit_resources' as const };
const errors = {
  401: { description: 'no or invalid credentials' },
  403: { description: 'the credential lacks edit_resources' },
  404: { description: 'FLOW_NOT_FOUND (missing or another tenant\'s) or NODE_NOT_FOUND' },
  412: { description: 'PRECONDITION_FAILED: If-Match names a version the flow moved on from' },
};
// The key is in the body once and must not sit in any cache.
const keyHeaders = (revision: number) => ({ ...etagOf(revision), 'Cache-Control': 'no-store' });

export const triggerRoutes = [
  defineRoute({
    ...common,
    method: 'PUT',
    path: '/flows/{flowId}/trigger',
    operationId: 'updateFlowTrigger',
    summary: "update the flow's trigger settings (partial; inputSchema null removes it); answers the settings, never the key (If-Match optional)",
    params: flowParams,
    body: settingsBody,
    responses: { 200: { description: 'the settings now', schema: z.object({ success: z.literal(true), trigger: triggerSchema }) }, 400: { description: 'VALIDATION_FAILED' }, ...errors },
    async handler(input) {
      const { result } = await writeFlow(input, input.params.flowId, { type: 'UpdateFlowTrigger', ...input.body });
      return { status: 200, body: { success: true, trigger: toTriggerView(result.state.trigger) }, headers: etagOf(result.revision) };
    },
  }),
  defineRoute({
    ...common,
    method: 'POST',
    path: '/flows/{flowId}/trigger/regenerate-key',
    operationId: 'regenerateFlowTriggerKey',
    summary: "make a new key for the flow's trigger, shown only in this answer; the previous key stops working at once (If-Match optional)",
    params: flowParams,
    responses: { 200: { description: 'the new key', schema: keySchema }, 400: { description: 'VALIDATION_FAILED' }, ...errors },
    async handler(input) {
      const { key, keyHash } = generateTriggerKey();
      const { result } = await writeFlow(input, input.params.flowId, { type: 'RegenerateFlowTriggerKey', keyHash });
      return { status: 200, body: { success: true, key, keyCreatedAt: result.state.trigger.keyCreatedAt }, headers: keyHeaders(result.revision) };
    },
  }),
  defineRoute({
    ...common,
    method: 'PUT',
    path: '/flows/{flowId}/nodes/{nodeId}/trigger',
    operationId: 'updateNodeTrigger',
    summary: "update a node's trigger settings (partial); answers the settings, never the key (If-Match optional)",
    params: nodeParams,
    body: settingsBody,
    responses: { 200: { description: 'the settings now', schema: z.object({ success: z.literal(true), nodeId: z.string(), trigger: triggerSchema }) }, 400: { description: 'VALIDATION_FAILED' }, ...errors },
    async handler(input) {
      const { flowId, nodeId } = input.params;
      const { result } = await writeFlow(input, flowId, { type: 'UpdateNodeTrigger', nodeId, ...input.body });
      return { status: 200, body: { success: true, nodeId, trigger: toTriggerView(nodeTriggerOf(result.state, nodeId)) }, headers: etagOf(result.revision) };
    },
  }),
  defineRoute({
    ...common,
    method: 'POST',
    path: '/flows/{flowId}/nodes/{nodeId}/trigger/regenerate-key',
    operationId: 'regenerateNodeTriggerKey',
    summary: "make a new key for a node's trigger, shown only in this answer; the previous key stops working at once (If-Match optional)",
    params: nodeParams,
    responses: { 200: { description: 'the new key', schema: keySchema.extend({ nodeId: z.string() }) }, 400: { description: 'VALIDATION_FAILED' }, ...errors },
    async handler(input) {
      const { flowId, nodeId } = input.params;
      const { key, keyHash } = generateTriggerKey();
      const { result } = await writeFlow(input, flowId, { type: 'RegenerateNodeTriggerKey', nodeId, keyHash });
      return { status: 200, body: { success: true, nodeId, key, keyCreatedAt: nodeTriggerOf(result.state, nodeId).keyCreatedAt }, headers: keyHeaders(result.revision) };
    },
  }),
];
