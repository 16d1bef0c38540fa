import { z } from 'zod';
import { generatePlaybook } from '../../commands/app-instances-playbook.js';
import { addAppInstanceMessage, createAppInstance, deleteAppInstance, patchAppInstanceData, replaceAppInstance, type AppInstancePorts } from '../../commands/app-instances.js';
import { flowScopeOf, parseIfMatch } from '../../commands/flows.js';
import {
  APP_INSTANCE_LIMITS,
  APP_INSTANCE_TYPE_IDS,
  appInstanceNotFound,
  appInstanceStreamId,
  MESSAGE_ROLES,
  type AppInstanceState,
  type JsonObject,
} from '../../domain/app-instances/index.js';
import { idSchema } from '../../domain/flows/index.js';
import { LLM_PROVIDER_IDS } from '../../ports/llm.js';
import { getAppInstance, pageAppInstances, type AppInstanceDoc } from '../../projections/app-instances.js';
import { getFlow } from '../../projections/flows.js';
import { latestFlowProcess } from '../../projections/runs.js';
import { ValidationError } from '../errors.js';
import { defineRoute, type RouteInput } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';

/**
 * App instances (the catalog's "App tools", issue 16): running copies of an app tool holding a
 * team's data, stream `appinstance-<id>`. See docs/app-instances.md. Files: app-instances-files.ts.
 */
type AnyInput = RouteInput<unknown, unknown, unknown>;

const TAG = 'App tools';
export const instanceParams = z.strictObject({ instanceId: idSchema });
const nameSchema = z.string().trim().min(1).max(APP_INSTANCE_LIMITS.nameChars);
const linkedFlowIdsSchema = z.array(idSchema).max(APP_INSTANCE_LIMITS.linkedFlows);
const dataSchema = z.record(z.string(), z.json());

const createBody = z.strictObject({
  type: z.enum(APP_INSTANCE_TYPE_IDS),
  name: nameSchema,
  appId: idSchema.nullable().optional(),
  /** Absent: the type's initial data (kanban: three columns, no cards). */
  data: dataSchema.optional(),
  linkedFlowIds: linkedFlowIdsSchema.default([]),
});
const replaceBody = z.strictObject({
  name: nameSchema,
  appId: idSchema.nullable().optional(),
  data: dataSchema,
  linkedFlowIds: linkedFlowIdsSchema.default([]),
});
/** A JSON Merge Patch (an object) or, with Content-Type application/json-patch+json, a JSON Patch (an array of operations). */
const patchBody = z.union([z.record(z.string(), z.json()), z.array(z.json()).max(APP_INSTANCE_LIMITS.patchOps)]);
const listQuery = pageQuery.extend({ type: z.enum(APP_INSTANCE_TYPE_IDS).optional() });
const messageBody = z.strictObject({ role: z.enum(MESSAGE_ROLES), content: z.string().min(1).max(APP_INSTANCE_LIMITS.messageChars) });
const playbookBody = z.strictObject({ provider: z.enum(LLM_PROVIDER_IDS).optional(), model: z.string().min(1).max(200).optional() }).default({});

const fileView = z.looseObject({ path: z.string(), size: z.number(), contentType: z.string(), sha256: z.string(), uploadedAt: z.string() });
const messageView = z.looseObject({ id: z.string(), role: z.enum(MESSAGE_ROLES), content: z.string(), by: z.string().nullable(), at: z.string() });
const instanceSchema = z.looseObject({
  id: z.string(),
  type: z.enum(APP_INSTANCE_TYPE_IDS),
  name: z.string(),
  appId: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  files: z.array(fileView),
  linkedFlowIds: z.array(z.string()),
  conversation: z.array(messageView),
  createdBy: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int(),
});
const summarySchema = z.looseObject({
  id: z.string(),
  type: z.enum(APP_INSTANCE_TYPE_IDS),
  name: z.string(),
  appId: z.string().nullable(),
  linkedFlowIds: z.array(z.string()),
  fileCount: z.number().int(),
  messageCount: z.number().int(),
  dataBytes: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int(),
});
const instanceReply = z.looseObject({ success: z.literal(true), instance: instanceSchema });

export function instanceView(s: AppInstanceState) {
  return {
    id: s.instanceId,
    type: s.type,
    name: s.name,
    appId: s.appId,
    data: s.data,
    files: s.files.map((f) => ({ path: f.path, size: f.size, contentType: f.contentType, sha256: f.sha256, uploadedAt: f.at })),
    linkedFlowIds: s.linkedFlowIds,
    conversation: s.conversation.map((m) => ({ id: m.messageId, role: m.role, content: m.content, by: m.by, at: m.at })),
    createdBy: s.createdBy,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    version: s.version,
  };
}

const summaryView = (d: AppInstanceDoc) => ({
  id: d._id,
  type: d.type,
  name: d.name,
  appId: d.appId,
  linkedFlowIds: d.linkedFlowIds,
  fileCount: d.fileCount,
  messageCount: d.messageCount,
  dataBytes: d.dataBytes,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
  version: d.version,
});

export const etagOf = (version: number) => ({ ETag: `"${version}"` });

/** The client's If-Match as a version; a header that is not one is a 400 naming it. */
export function instanceIfMatch(input: Pick<AnyInput, 'koa'>): number | undefined {
  const expected = parseIfMatch(input.koa.get('if-match') || undefined);
  if (Number.isNaN(expected)) throw new ValidationError([{ field: 'headers.if-match', message: 'must be an instance version as the ETag gave it, e.g. "3"' }]);
  return expected;
}

export function instancePorts(input: AnyInput): AppInstancePorts {
  const { services } = input;
  return { eventStore: services.eventStore, objects: services.objects, newId: () => services.newId() };
}

export const scopeOf = (input: AnyInput) => flowScopeOf(input.principal!);

const E = {
  400: { description: 'VALIDATION_FAILED (names the field; also headers.if-match)' },
  401: { description: 'UNAUTHENTICATED' },
  403: { description: 'FORBIDDEN: the role lacks the permission (viewers read, editors write)' },
  404: { description: "APP_INSTANCE_NOT_FOUND (also another tenant's instance)" },
};
const dataErrors = {
  400: { description: 'VALIDATION_FAILED, DATA_SCHEMA_VIOLATION (details.fields: [{field: "data.cards.0.title", pointer, message}]), INVALID_PATCH, UNKNOWN_INSTANCE_TYPE' },
  413: { description: 'DATA_TOO_LARGE (the data over 1 MiB), WRITE_TOO_LARGE (one write over 768 KiB), PAYLOAD_TOO_LARGE (the body)' },
};

export const appInstanceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/app-instances',
    operationId: 'listAppInstances',
    summary: "the tenant's app instances, newest first, optionally of one type (summaries without data); paginated",
    tag: TAG,
    auth: 'bearer',
    permission: 'view_resources',
    query: listQuery,
    responses: { 200: { description: '{success, items: [summary], nextCursor}', schema: z.looseObject({ success: z.literal(true), items: z.array(summarySchema), nextCursor: z.string().nullable() }) }, ...E },
    async handler(input) {
      const { query, services } = input;
      const page = await pageAppInstances(services.readStore, scopeOf(input), { type: query.type, limit: query.limit, cursor: query.cursor ?? null });
      return pageReply(page, summaryView);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/app-instances',
    operationId: 'createAppInstance',
    summary: "create an app instance of a type (kanban, job_tracker); data defaults to the type's initial data and is checked against its JSON Schema",
    tag: TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    body: createBody,
    responses: {
      201: { description: 'the instance (ETag: its version)', schema: instanceReply },
      ...E,
      ...dataErrors,
      404: { description: 'FLOW_NOT_FOUND (a linked flow; details.field) or APP_NOT_FOUND' },
    },
    async handler(input) {
      const { body, services } = input;
      const instanceId = `inst_${services.newId()}`;
      const result = await createAppInstance(instancePorts(input), input.command, scopeOf(input), {
        instanceId,
        type: body.type,
        name: body.name,
        appId: body.appId ?? null,
        data: body.data,
        linkedFlowIds: body.linkedFlowIds,
      });
      await input.settle(result.position, appInstanceStreamId(instanceId));
      return { status: 201, body: { success: true, instance: instanceView(result.state) }, headers: { ...etagOf(result.revision), Location: `/api/app-instances/${instanceId}` } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/app-instances/{instanceId}',
    operationId: 'getAppInstance',
    summary: 'an app instance with its data, files, linked flows and conversation; ETag is its version',
    tag: TAG,
    auth: 'bearer',
    permission: 'view_resources',
    params: instanceParams,
    responses: { 200: { description: 'the instance', schema: instanceReply }, ...E },
    async handler(input) {
      const state = await getAppInstance(input.services.readStore, input.params.instanceId, scopeOf(input));
      if (!state) throw appInstanceNotFound();
      return { status: 200, body: { success: true, instance: instanceView(state) }, headers: etagOf(state.version) };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/app-instances/{instanceId}',
    operationId: 'replaceAppInstance',
    summary: 'replace name, appId, linkedFlowIds and the whole data (the type stays); If-Match: a stale version is 412',
    tag: TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    params: instanceParams,
    body: replaceBody,
    responses: {
      200: { description: 'the instance (ETag: its version)', schema: instanceReply },
      ...E,
      ...dataErrors,
      404: { description: 'APP_INSTANCE_NOT_FOUND, FLOW_NOT_FOUND (a linked flow) or APP_NOT_FOUND' },
      409: { description: 'CONCURRENCY_CONFLICT' },
      412: { description: 'PRECONDITION_FAILED: If-Match names an older version' },
    },
    async handler(input) {
      const { body, params } = input;
      const result = await replaceAppInstance(
        instancePorts(input),
        input.command,
        scopeOf(input),
        params.instanceId,
        { name: body.name, appId: body.appId ?? null, data: body.data, linkedFlowIds: body.linkedFlowIds },
        instanceIfMatch(input),
      );
      await input.settle(result.position, appInstanceStreamId(params.instanceId));
      return { status: 200, body: { success: true, instance: instanceView(result.state) }, headers: etagOf(result.revision) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/app-instances/{instanceId}',
    operationId: 'deleteAppInstance',
    summary: "delete an app instance and its files' objects (its event stream stays as the audit trail)",
    tag: TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    params: instanceParams,
    responses: {
      200: { description: '{success, deleted: true}', schema: z.looseObject({ success: z.literal(true), deleted: z.literal(true) }) },
      ...E,
      409: { description: 'CONCURRENCY_CONFLICT' },
      412: { description: 'PRECONDITION_FAILED: If-Match names an older version' },
    },
    async handler(input) {
      const { params } = input;
      const result = await deleteAppInstance(instancePorts(input), input.command, scopeOf(input), params.instanceId, instanceIfMatch(input));
      await input.settle(result.position, appInstanceStreamId(params.instanceId));
      return { status: 200, body: { success: true, deleted: true } };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/app-instances/{instanceId}/data',
    operationId: 'patchAppInstanceData',
    summary:
      "patch the data: a JSON Merge Patch (RFC 7396; application/json or application/merge-patch+json) or a JSON Patch (RFC 6902; application/json-patch+json), checked against the type's schema. If-Match: changes since that version to the same place → 412; to other places, both land",
    tag: TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    params: instanceParams,
    body: patchBody,
    responses: {
      200: { description: 'the instance after the patch (ETag: its version)', schema: instanceReply },
      ...E,
      ...dataErrors,
      409: { description: 'PATCH_CONFLICT (a JSON Patch operation does not apply: details.index), PATCH_TEST_FAILED, CONCURRENCY_CONFLICT' },
      412: { description: 'PRECONDITION_FAILED: changes since the If-Match version touched the same place (details.conflicts)' },
    },
    async handler(input) {
      const { params, koa } = input;
      const body = input.body as JsonObject | unknown[];
      const jsonPatch = koa.is('application/json-patch+json') === 'application/json-patch+json';
      if (jsonPatch && !Array.isArray(body)) throw new ValidationError([{ field: 'body', message: 'a JSON Patch (application/json-patch+json) is an array of operations' }]);
      if (!jsonPatch && Array.isArray(body)) {
        throw new ValidationError([{ field: 'body', message: 'a JSON Merge Patch is an object; send a JSON Patch array with Content-Type: application/json-patch+json' }]);
      }
      const patch = jsonPatch ? { format: 'json-patch' as const, ops: body as unknown[] } : { format: 'merge-patch' as const, patch: body as JsonObject };
      const result = await patchAppInstanceData(instancePorts(input), input.command, scopeOf(input), params.instanceId, patch, instanceIfMatch(input));
      await input.settle(result.position, appInstanceStreamId(params.instanceId));
      return { status: 200, body: { success: true, instance: instanceView(result.state) }, headers: etagOf(result.revision) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/app-instances/{instanceId}/playbook',
    operationId: 'appInstancePlaybook',
    summary:
      'a playbook (markdown) telling a worker agent how to operate the instance, written by a model (the provider named, else the first configured); offline provider: a deterministic template. Records nothing',
    tag: TAG,
    auth: 'bearer',
    permission: 'view_resources',
    params: instanceParams,
    body: playbookBody,
    responses: {
      200: {
        description: '{success, playbook: {markdown, provider, model, offline, usage}}',
        schema: z.looseObject({ success: z.literal(true), playbook: z.looseObject({ markdown: z.string(), provider: z.enum(LLM_PROVIDER_IDS), model: z.string(), offline: z.boolean() }) }),
      },
      ...E,
      402: { description: 'BUDGET_EXCEEDED (the organization spent its monthly LLM budget)' },
    },
    errors: [429, 502, 504],
    async handler(input) {
      const { services, params, body, principal } = input;
      const state = await getAppInstance(services.readStore, params.instanceId, scopeOf(input));
      if (!state) throw appInstanceNotFound();
      const playbook = await generatePlaybook(
        { eventStore: services.eventStore, llm: services.llm, clock: { now: () => services.now() }, logger: services.logger, newId: () => services.newId() },
        input.command,
        { orgId: principal!.orgId, userId: principal!.userId },
        state,
        body,
      );
      return { status: 200, body: { success: true, playbook } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/app-instances/{instanceId}/messages',
    operationId: 'addAppInstanceMessage',
    summary: "add a message {role, content} to the instance's conversation",
    tag: TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    params: instanceParams,
    body: messageBody,
    responses: {
      201: { description: '{success, message: {id, role, content, by, at}, version}', schema: z.looseObject({ success: z.literal(true), message: messageView, version: z.number().int() }) },
      ...E,
      409: { description: `CONVERSATION_FULL (at most ${APP_INSTANCE_LIMITS.messages} messages)` },
    },
    async handler(input) {
      const { params, body } = input;
      const { result, messageId } = await addAppInstanceMessage(instancePorts(input), input.command, scopeOf(input), params.instanceId, body);
      await input.settle(result.position, appInstanceStreamId(params.instanceId));
      const message = result.state.conversation.find((m) => m.messageId === messageId)!;
      return {
        status: 201,
        body: { success: true, message: { id: message.messageId, role: message.role, content: message.content, by: message.by, at: message.at }, version: result.revision },
        headers: etagOf(result.revision),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/app-instances/{instanceId}/flows',
    operationId: 'listAppInstanceFlows',
    summary: `the flows linked to the instance (at most ${APP_INSTANCE_LIMITS.linkedFlows}, so one page) with each one's last run; a flow deleted since shows found: false`,
    tag: TAG,
    auth: 'bearer',
    permission: 'view_resources',
    params: instanceParams,
    responses: {
      200: {
        description: '{success, items: [{flowId, found, name, version, lastRun: {processId, status, mode, requestedAt, startedAt, finishedAt} | null}], nextCursor: null}',
        schema: z.looseObject({ success: z.literal(true), items: z.array(z.looseObject({ flowId: z.string(), found: z.boolean() })), nextCursor: z.null() }),
      },
      ...E,
    },
    async handler(input) {
      const { services, params } = input;
      const scope = scopeOf(input);
      const state = await getAppInstance(services.readStore, params.instanceId, scope);
      if (!state) throw appInstanceNotFound();
      const items = await Promise.all(
        state.linkedFlowIds.map(async (flowId) => {
          const flow = await getFlow(services.readStore, flowId, scope);
          if (!flow) return { flowId, found: false, name: null, version: null, lastRun: null };
          const run = await latestFlowProcess(services.readStore, flowId);
          const lastRun = run ? { processId: run._id, status: run.status, mode: run.mode, requestedAt: run.requestedAt, startedAt: run.startedAt, finishedAt: run.finishedAt } : null;
          return { flowId, found: true, name: flow.name, version: flow.version, lastRun };
        }),
      );
      return { status: 200, body: { success: true, items, nextCursor: null } };
    },
  }),
];
