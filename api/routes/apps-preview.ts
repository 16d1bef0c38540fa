import { z } from 'zod';
import { loadVisibleApp } from '../../commands/apps.js';
import { previewSite, revokePreview, startPreview } from '../../commands/apps-preview.js';
import { appPreviewStreamId } from '../../domain/apps/preview-decide.js';
import { idSchema } from '../../domain/flows/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { Principal } from '../../domain/shared/principal.js';
import type { Context } from 'koa';
import type { Services } from '../../ports/services.js';
import { defineRoute } from '../route.js';

/** App previews: POST …/preview answers a URL with an unguessable token; DELETE revokes it at once. */
export const appDeliveryTag = 'Apps';
export const appIdParams = z.strictObject({ appId: idSchema });
export const tenantOf = (p: Principal) => ({ userId: p.userId, orgId: p.orgId, workspaceId: p.workspaceId });

/** Where previews and deployments are served: APPS_PUBLIC_ORIGIN, else this request's origin; always under /apps-public. */
export function publicBase(services: Services, koa: Context): string {
  return `${services.config.APPS_PUBLIC_ORIGIN || `${koa.protocol}://${koa.get('host')}`}/apps-public`;
}

const buildProblem = z.object({ file: z.string().nullable(), line: z.number().nullable(), column: z.number().nullable(), message: z.string() });

export const appPreviewRoutes = [
  defineRoute({
    method: 'POST',
    path: '/apps/{appId}/preview',
    operationId: 'createAppPreview',
    summary: "preview the app's current files at a URL with an unguessable token (replaces the app's previous preview); the page's flow calls are authenticated by that token",
    tag: appDeliveryTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appIdParams,
    responses: {
      201: {
        description: 'the preview URL (shown once) and when it expires (APPS_PREVIEW_TTL_SECONDS)',
        schema: z.object({ success: z.literal(true), url: z.string(), expiresAt: z.string(), previewId: z.string(), files: z.number() }),
      },
      404: { description: 'APP_NOT_FOUND' },
      422: {
        description: 'APP_BUILD_FAILED (details.problems: [{file, line, column, message}]), APP_BUILD_TIMEOUT, APP_BUILD_TOO_LARGE, PACKAGE_NOT_ALLOWED (an import of a package not on the list; details.allowedPackages lists the importable specifiers): the current files do not build',
        schema: z.object({ success: z.literal(false), error: z.object({ code: z.string(), message: z.string(), details: z.object({ problems: z.array(buildProblem), log: z.array(z.string()), allowedPackages: z.array(z.string()).optional() }) }) }),
      },
    },
    async handler(input) {
      const { services, principal, params, command } = input;
      const tenant = tenantOf(principal!);
      // Build first: a preview of files that do not build is refused with file and line.
      await loadVisibleApp(services.eventStore, params.appId, tenant);
      const { result } = await previewSite(services.eventStore, services.appDelivery, params.appId);
      if (!result.ok) throw new DomainError(result.code, result.message, 'unprocessable', { problems: result.problems, log: result.log, ...(result.allowedPackages ? { allowedPackages: result.allowedPackages } : {}) });
      const started = await startPreview({ eventStore: services.eventStore, newId: services.newId }, command, tenant, params.appId, services.config.APPS_PREVIEW_TTL_SECONDS);
      await input.settle(started.position, appPreviewStreamId(params.appId));
      return {
        status: 201,
        body: { success: true, url: `${publicBase(services, input.koa)}/p/${params.appId}/${started.token}/`, expiresAt: started.expiresAt, previewId: started.previewId, files: result.site.files.size },
      };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/apps/{appId}/preview',
    operationId: 'deleteAppPreview',
    summary: "revoke the app's preview URL: its next request answers 404",
    tag: appDeliveryTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appIdParams,
    responses: {
      200: { description: 'revoked', schema: z.object({ success: z.literal(true), revoked: z.literal(true), previewId: z.string() }) },
      404: { description: 'APP_NOT_FOUND, PREVIEW_NOT_FOUND (no live preview)' },
    },
    async handler(input) {
      const { services, principal, params, command } = input;
      const result = await revokePreview(services.eventStore, command, tenantOf(principal!), params.appId);
      await input.settle(result.position, appPreviewStreamId(params.appId));
      const revoked = result.events.find((e) => e.type === 'PreviewRevoked')!;
      return { status: 200, body: { success: true, revoked: true, previewId: revoked.data.previewId } };
    },
  }),
];
