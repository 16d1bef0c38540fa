import { z } from 'zod';
import { executeAppCommand, loadVisibleApp } from '../../commands/apps.js';
import { checkContract } from '../../commands/apps-contract.js';
import { flowScopeOf, parseIfMatch } from '../../commands/flows.js';
import type { HandleResult } from '../../commands/handle.js';
import {
  APP_PACKAGE_SPECIFIERS, APP_PACKAGES, appStreamId, EMPTY_CONTRACT, MAX_APP_DESCRIPTION_LENGTH, MAX_APP_NAME_LENGTH,
  type AppEvent, type AppState, type AppTenant,
} from '../../domain/apps/index.js';
import { listApps, type AppDoc } from '../../projections/apps.js';
import { ValidationError } from '../errors.js';
import { defineRoute, type RouteDef, type RouteInput } from '../route.js';
import { pageQuery } from './pagination.js';

/**
 * Apps (`app-<id>` streams): a set of front-end files whose backend is one linked flow, plus the
 * I/O contract between them. This file holds the CRUD routes and what the other apps route files
 * share; previews, deployments and public serving are in apps-preview/deploy/public.ts.
 */

type AnyInput = RouteInput<unknown, unknown, unknown>;

export const appsTag = 'Apps';
export const appIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');
export const appParams = z.strictObject({ appId: appIdSchema });

export const tenantOf = (input: Pick<AnyInput, 'principal'>): AppTenant => flowScopeOf(input.principal!);
export const appEtag = (version: number) => ({ ETag: `"${version}"` });

/** The client's If-Match as an app version; a header that is not one is a 400 naming it. */
export function appIfMatch(input: Pick<AnyInput, 'koa'>): number | undefined {
  const expected = parseIfMatch(input.koa.get('if-match') || undefined);
  if (Number.isNaN(expected)) throw new ValidationError([{ field: 'headers.if-match', message: 'must be the app version its ETag gave, e.g. "3"' }]);
  return expected;
}

export const jsonSchemaObject = z.record(z.string(), z.unknown());
export const contractSchema = z.strictObject({ input: jsonSchemaObject, output: jsonSchemaObject });

export const appOut = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  flowId: z.string().nullable(),
  contract: z.object({ input: jsonSchemaObject, output: jsonSchemaObject }),
  fileCount: z.number().int(),
  totalBytes: z.number().int(),
  versionCount: z.number().int(),
  version: z.number().int().describe('the app\'s version: its ETag and what If-Match names'),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const appSummaryOut = appOut.omit({ contract: true });

export function appView(state: AppState) {
  return {
    id: state.appId, name: state.name, description: state.description, flowId: state.flowId, contract: state.contract,
    fileCount: Object.keys(state.files).length, totalBytes: state.totalBytes, versionCount: state.versions.length,
    version: state.version, createdAt: state.createdAt, updatedAt: state.updatedAt,
  };
}

const summaryView = (doc: AppDoc) => ({
  id: doc._id, name: doc.name, description: doc.description, flowId: doc.flowId, fileCount: doc.fileCount, totalBytes: doc.totalBytes,
  versionCount: doc.versionCount, version: doc.version, createdAt: doc.createdAt, updatedAt: doc.updatedAt,
});

/** Read-your-writes for the app list after a write (a write that changed nothing waits for nothing). */
export async function settleApp(input: AnyInput, appId: string, result: HandleResult<AppState, AppEvent>): Promise<void> {
  await input.settle(result.position, appStreamId(appId));
}

export const appErrors = {
  404: { description: 'APP_NOT_FOUND: unknown, deleted or another tenant\'s app' },
  409: { description: 'CONCURRENCY_CONFLICT' },
  412: { description: 'PRECONDITION_FAILED: If-Match names another version of the app (details: expected, actual)' },
};

const nameSchema = z.string().min(1).max(MAX_APP_NAME_LENGTH);
const descriptionSchema = z.string().max(MAX_APP_DESCRIPTION_LENGTH);
const appReply = z.object({ success: z.literal(true), app: appOut });

export const appRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/apps',
    operationId: 'listApps',
    summary: 'list the apps of the active workspace, most recently changed first',
    tag: appsTag,
    auth: 'bearer',
    permission: 'view_resources',
    query: pageQuery,
    responses: { 200: { description: 'a page of apps (without files)', schema: z.object({ success: z.literal(true), items: z.array(appSummaryOut), nextCursor: z.string().nullable() }) } },
    async handler(input) {
      const page = await listApps(input.services.readStore, tenantOf(input), { limit: input.query.limit, cursor: input.query.cursor ?? null });
      return { status: 200, body: { success: true, items: page.items.map(summaryView), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/apps',
    operationId: 'createApp',
    summary: 'create an app (no files yet; the contract defaults to two empty object schemas)',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    body: z.strictObject({ name: nameSchema, description: descriptionSchema.optional(), contract: contractSchema.optional() }),
    responses: {
      201: { description: 'created (ETag: its version)', schema: appReply },
      400: { description: 'VALIDATION_FAILED, APP_NAME_REQUIRED, APP_CONTRACT_INVALID (the side and ajv\'s errors named)' },
      413: { description: 'APP_CONTRACT_TOO_LARGE' },
    },
    async handler(input) {
      const { body, services } = input;
      const contract = body.contract ?? EMPTY_CONTRACT;
      checkContract(contract);
      const appId = services.newId();
      const result = await executeAppCommand(services.eventStore, input.command, {
        type: 'CreateApp', appId, tenant: tenantOf(input), by: input.command.actorId, name: body.name, description: body.description ?? '', contract,
      });
      await settleApp(input, appId, result);
      return { status: 201, body: { success: true, app: appView(result.state) }, headers: appEtag(result.state.version) };
    },
  }),
  // Before /apps/{appId}: the first matching route answers, and "packages" is not an app id.
  defineRoute({
    method: 'GET',
    path: '/apps/packages',
    operationId: 'listAppPackages',
    summary: 'the npm packages an app may import (bundled from the service\'s own node_modules); any other bare import fails the build as PACKAGE_NOT_ALLOWED',
    tag: appsTag,
    auth: 'bearer',
    permission: 'view_resources',
    responses: {
      200: {
        description: 'the packages, each with the import specifiers an app may write and why it is there',
        schema: z.object({ success: z.literal(true), packages: z.array(z.object({ name: z.string(), specifiers: z.array(z.string()), why: z.string() })), specifiers: z.array(z.string()) }),
      },
    },
    async handler() {
      return { status: 200, body: { success: true, packages: APP_PACKAGES.map((p) => ({ name: p.name, specifiers: [...p.specifiers], why: p.why })), specifiers: [...APP_PACKAGE_SPECIFIERS] } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/apps/{appId}',
    operationId: 'getApp',
    summary: 'get an app: name, contract, linked flow, file count and size, version (ETag)',
    tag: appsTag,
    auth: 'bearer',
    permission: 'view_resources',
    params: appParams,
    responses: { 200: { description: 'the app', schema: appReply }, 404: appErrors[404] },
    async handler(input) {
      const state = await loadVisibleApp(input.services.eventStore, input.params.appId, tenantOf(input));
      return { status: 200, body: { success: true, app: appView(state) }, headers: appEtag(state.version) };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/apps/{appId}',
    operationId: 'updateApp',
    summary: 'rename an app or change its description (If-Match: its version)',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appParams,
    body: z.strictObject({ name: nameSchema.optional(), description: descriptionSchema.optional() }),
    responses: { 200: { description: 'the app as it is now', schema: appReply }, ...appErrors },
    async handler(input) {
      const { params, body, services } = input;
      const result = await executeAppCommand(services.eventStore, input.command, {
        type: 'UpdateApp', appId: params.appId, tenant: tenantOf(input), by: input.command.actorId, name: body.name, description: body.description,
      }, appIfMatch(input));
      await settleApp(input, params.appId, result);
      return { status: 200, body: { success: true, app: appView(result.state) }, headers: appEtag(result.state.version) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/apps/{appId}',
    operationId: 'deleteApp',
    summary: 'delete an app (its history stays in the log; it leaves lists and answers 404)',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appParams,
    responses: { 200: { description: 'deleted', schema: z.object({ success: z.literal(true), id: z.string(), message: z.string() }) }, ...appErrors },
    async handler(input) {
      const { params, services } = input;
      const result = await executeAppCommand(services.eventStore, input.command, { type: 'DeleteApp', appId: params.appId, tenant: tenantOf(input), by: input.command.actorId }, appIfMatch(input));
      await settleApp(input, params.appId, result);
      return { status: 200, body: { success: true, id: params.appId, message: 'app deleted' } };
    },
  }),
];
