import { z } from 'zod';
import { loadVisibleApp } from '../../commands/apps.js';
import { createAppVersion, restoreAppVersion } from '../../commands/apps-versions.js';
import { MAX_VERSION_LABEL_LENGTH, type AppVersion } from '../../domain/apps/index.js';
import { ValidationError } from '../errors.js';
import { defineRoute, type RouteDef } from '../route.js';
import { appErrors, appEtag, appIfMatch, appIdSchema, appOut, appsTag, appView, settleApp, tenantOf } from './apps.js';
import { pageQuery } from './pagination.js';

/**
 * Versions: snapshots of the files (byte for byte), the contract and the linked flow with its
 * version; a restore makes one the head again as a new change (never destroying anything). Dates
 * of versions never change.
 */

const versionOut = z.object({
  id: z.string(),
  number: z.number().int().describe('1, 2, 3… in the order taken'),
  label: z.string().nullable(),
  createdAt: z.string().describe('when it was taken; never changes'),
  createdBy: z.string().nullable(),
  appVersion: z.number().int().describe('the app\'s version the snapshot records'),
  fileCount: z.number().int(),
  totalBytes: z.number().int(),
  files: z.array(z.object({ path: z.string(), encoding: z.enum(['utf8', 'base64']), sha256: z.string(), size: z.number().int() })),
  flowId: z.string().nullable(),
  flowVersion: z.number().int().nullable().describe('the linked flow\'s version when taken'),
});

export function versionView(v: AppVersion) {
  return {
    id: v.versionId, number: v.number, label: v.label, createdAt: v.createdAt, createdBy: v.createdBy, appVersion: v.appVersion,
    fileCount: v.files.length, totalBytes: v.files.reduce((sum, f) => sum + f.size, 0), files: v.files, flowId: v.flowId, flowVersion: v.flowVersion,
  };
}

const versionParams = z.strictObject({ appId: appIdSchema, versionId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a version id') });

export const appVersionRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/apps/{appId}/versions',
    operationId: 'listAppVersions',
    summary: 'the app\'s versions, newest first, with their manifests (files by path, size and sha256) and dates that never change',
    tag: appsTag,
    auth: 'bearer',
    permission: 'view_resources',
    params: z.strictObject({ appId: appIdSchema }),
    query: pageQuery,
    responses: {
      200: { description: 'a page of versions', schema: z.object({ success: z.literal(true), items: z.array(versionOut), nextCursor: z.string().nullable() }) },
      400: { description: 'VALIDATION_FAILED (limit, cursor)' },
      404: appErrors[404],
    },
    async handler(input) {
      const state = await loadVisibleApp(input.services.eventStore, input.params.appId, tenantOf(input));
      // Newest first; the cursor is the number of the last version of the previous page (numbers never change).
      const before = input.query.cursor === undefined ? Number.POSITIVE_INFINITY : Number(input.query.cursor);
      if (!Number.isInteger(before) && before !== Number.POSITIVE_INFINITY) {
        throw new ValidationError([{ field: 'query.cursor', message: 'not a cursor this list gave' }]);
      }
      const older = state.versions.filter((v) => v.number < before).reverse();
      const items = older.slice(0, input.query.limit);
      const nextCursor = older.length > items.length ? String(items[items.length - 1].number) : null;
      return { status: 200, body: { success: true, items: items.map(versionView), nextCursor } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/apps/{appId}/versions',
    operationId: 'createAppVersion',
    summary: 'snapshot the app: its files byte for byte, its contract, its linked flow and that flow\'s version',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: z.strictObject({ appId: appIdSchema }),
    body: z.strictObject({ label: z.string().max(MAX_VERSION_LABEL_LENGTH).optional() }).default({}),
    responses: {
      201: { description: 'the new version', schema: z.object({ success: z.literal(true), version: versionOut, appVersion: z.number().int() }) },
      ...appErrors,
      413: { description: 'APP_TOO_MANY_VERSIONS (1,000 per app)' },
    },
    async handler(input) {
      const { params, body, services } = input;
      const { result, version } = await createAppVersion(services.eventStore, input.command, params.appId, tenantOf(input), { versionId: services.newId() }, body.label ?? null, appIfMatch(input));
      await settleApp(input, params.appId, result);
      return { status: 201, body: { success: true, version: versionView(version), appVersion: result.state.version }, headers: appEtag(result.state.version) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/apps/{appId}/versions/{versionId}/restore',
    operationId: 'restoreAppVersion',
    summary: 'make a version the head again as a new change: exactly its files (later ones gone), its contract and linked flow; restoring what is already the head changes nothing',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: versionParams,
    responses: {
      200: { description: 'restored (restored: false when the head already was that version)', schema: z.object({ success: z.literal(true), restored: z.boolean(), versionId: z.string(), app: appOut }) },
      404: { description: 'APP_NOT_FOUND, APP_VERSION_NOT_FOUND' },
      409: appErrors[409],
      412: appErrors[412],
    },
    async handler(input) {
      const { params, services } = input;
      const { result, restored } = await restoreAppVersion(services.eventStore, input.command, params.appId, tenantOf(input), params.versionId, appIfMatch(input));
      await settleApp(input, params.appId, result);
      return { status: 200, body: { success: true, restored, versionId: params.versionId, app: appView(result.state) }, headers: appEtag(result.state.version) };
    },
  }),
];
