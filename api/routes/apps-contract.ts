import { z } from 'zod';
import { loadVisibleApp } from '../../commands/apps.js';
import { contractReport, createFlowForApp, linkFlow, saveContract, unlinkFlow } from '../../commands/apps-contract.js';
import { idSchema } from '../../domain/flows/index.js';
import { flowStreamId } from '../../domain/flows/index.js';
import { defineRoute, type RouteDef, type RouteInput } from '../route.js';
import { appErrors, appEtag, appIfMatch, appOut, appParams, appsTag, appView, contractSchema, jsonSchemaObject, settleApp, tenantOf } from './apps.js';

/**
 * The app's backend: the I/O contract (checked by ajv) with a report of where the linked flow does
 * not match it, linking a flow the caller can run, unlinking, and creating a matching flow.
 */

const mismatchOut = z.object({
  side: z.enum(['input', 'output']),
  path: z.string().describe('JSON Pointer into the contract\'s schema of that side; empty for the whole side'),
  code: z.string(),
  message: z.string(),
});
const reportOut = z.object({
  linked: z.boolean().describe('false when no flow is linked (or the linked one is gone)'),
  flowId: z.string().nullable(),
  matches: z.boolean(),
  mismatches: z.array(mismatchOut),
});
const contractReply = z.object({ success: z.literal(true), contract: z.object({ input: jsonSchemaObject, output: jsonSchemaObject }), version: z.number().int(), flow: reportOut });
const linkReply = z.object({ success: z.literal(true), app: appOut, flow: reportOut });

async function answerWithReport(input: RouteInput<{ appId: string }, unknown, unknown>, state: Parameters<typeof appView>[0], status = 200, extra: Record<string, unknown> = {}) {
  const flow = await contractReport(input.services.eventStore, state, tenantOf(input));
  return { status, body: { success: true, ...extra, app: appView(state), flow }, headers: appEtag(state.version) };
}

export const appContractRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/apps/{appId}/contract',
    operationId: 'getAppContract',
    summary: 'the app\'s contract (JSON Schemas of what it sends to its flow and gets back) and where the linked flow does not match it',
    tag: appsTag,
    auth: 'bearer',
    permission: 'view_resources',
    params: appParams,
    responses: { 200: { description: 'the contract and the match report', schema: contractReply }, 404: appErrors[404] },
    async handler(input) {
      const state = await loadVisibleApp(input.services.eventStore, input.params.appId, tenantOf(input));
      const flow = await contractReport(input.services.eventStore, state, tenantOf(input));
      return { status: 200, body: { success: true, contract: state.contract, version: state.version, flow }, headers: appEtag(state.version) };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/apps/{appId}/contract',
    operationId: 'putAppContract',
    summary: 'save the contract: both schemas must be valid JSON Schemas describing objects; the answer says where the linked flow does not match (If-Match: the app\'s version)',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appParams,
    body: contractSchema,
    responses: {
      200: { description: 'saved (or unchanged), with the match report', schema: contractReply },
      400: { description: 'VALIDATION_FAILED, APP_CONTRACT_INVALID (details: side, errors with ajv\'s paths and messages)' },
      ...appErrors,
      413: { description: 'APP_CONTRACT_TOO_LARGE (64 KiB as JSON)' },
    },
    async handler(input) {
      const { params, body, services } = input;
      const tenant = tenantOf(input);
      const result = await saveContract(services.eventStore, input.command, params.appId, tenant, body, appIfMatch(input));
      await settleApp(input, params.appId, result);
      const flow = await contractReport(services.eventStore, result.state, tenant);
      return { status: 200, body: { success: true, contract: result.state.contract, version: result.state.version, flow }, headers: appEtag(result.state.version) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/apps/{appId}/flow',
    operationId: 'linkAppFlow',
    summary: 'link a flow the caller can run (same workspace) as the app\'s backend; the answer says where it does not match the contract',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appParams,
    body: z.strictObject({ flowId: idSchema }),
    responses: {
      200: { description: 'linked (or already linked), with the match report', schema: linkReply },
      404: { description: 'APP_NOT_FOUND, or FLOW_NOT_FOUND: no flow the caller can run has that id' },
      409: appErrors[409],
      412: appErrors[412],
    },
    async handler(input) {
      const { params, body, services } = input;
      const result = await linkFlow(services.eventStore, input.command, params.appId, tenantOf(input), body.flowId, appIfMatch(input));
      await settleApp(input, params.appId, result);
      return answerWithReport(input, result.state);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/apps/{appId}/flow',
    operationId: 'unlinkAppFlow',
    summary: 'unlink the app\'s flow (the flow itself stays)',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appParams,
    responses: {
      200: { description: 'unlinked', schema: z.object({ success: z.literal(true), app: appOut, previousFlowId: z.string() }) },
      404: appErrors[404],
      409: { description: 'APP_FLOW_NOT_LINKED, or CONCURRENCY_CONFLICT' },
      412: appErrors[412],
    },
    async handler(input) {
      const { params, services } = input;
      const result = await unlinkFlow(services.eventStore, input.command, params.appId, tenantOf(input), appIfMatch(input));
      await settleApp(input, params.appId, result);
      const event = result.events[0];
      const previousFlowId = event?.type === 'AppFlowUnlinked' ? event.data.previousFlowId : '';
      return { status: 200, body: { success: true, app: appView(result.state), previousFlowId }, headers: appEtag(result.state.version) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/apps/{appId}/flow/create',
    operationId: 'createAppFlow',
    summary: 'create a flow matching the contract (an input node checking the input schema, an output node per output property) in the caller\'s workspace and link it',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appParams,
    body: z.strictObject({ name: z.string().min(1).max(200).optional().describe('the flow\'s name; "<app name> backend" when absent') }).default({}),
    responses: {
      201: { description: 'created and linked; the report shows it matches', schema: linkReply.extend({ flowId: z.string() }) },
      ...appErrors,
    },
    async handler(input) {
      const { params, services } = input;
      const flowId = services.newId();
      const { flow, linked } = await createFlowForApp(services.eventStore, input.command, params.appId, tenantOf(input), { flowId, newId: () => services.newId() }, {
        name: input.body.name, expectedRevision: appIfMatch(input),
      });
      await input.settle(flow.position, flowStreamId(flowId));
      await settleApp(input, params.appId, linked);
      return answerWithReport(input, linked.state, 201, { flowId });
    },
  }),
];
