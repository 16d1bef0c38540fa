import Koa from 'koa';
import { Router } from '@koa/router';
import type { Services } from '../ports/services.js';
import type { CommandContext } from '../commands/handle.js';
import { mountConsole } from './console.js';
import { docsAssets, docsPage } from './docs-page.js';
import { bodyParser } from './middleware/body.js';
import { urlEncoding } from './middleware/encoding.js';
import { errorHandler } from './middleware/error-handler.js';
import { allowedMethods } from './middleware/methods.js';
import { StatusError } from './errors.js';
import { httpMetrics } from './middleware/http-metrics.js';
import { requestContext } from './middleware/request-context.js';
import { tracing } from './middleware/tracing.js';
import { mountAppsPublic } from './routes/apps-public.js';
import { MCP_RESOURCE_METADATA_PATH } from './routes/flows-mcp.js';
import { buildOpenApi } from './openapi.js';
import type { RouteDef, RouteInput } from './route.js';
import { parsePart } from './validation.js';
import type { RequiredPermission } from '../domain/shared/permissions.js';

const toKoaPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

function memo<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** Builds the Koa app under /api from the route table; the same table yields the OpenAPI document. */
export function createApp(services: Services, routes: RouteDef[]): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router({ prefix: '/api' });
  // Built on first request, not at start: the document walks every route's schemas (≈ 0.4 s here).
  const openapi = memo(() => buildOpenApi(routes, { title: 'Flow automation service', version: '0.1.0' }));
  const docs = memo(() => docsPage(openapi()));
  const assets = memo(docsAssets);

  app.use(tracing());
  // Previews and deployments of apps, outside /api, in front of Koa: static files answer without the API's middleware (api/routes/apps-public.ts).
  mountAppsPublic(app, services);
  // The web console at the origin's root (web/, built into dist/web/), in front of the API's middleware like the apps.
  mountConsole(app);
  app.use(httpMetrics(services.metrics));
  app.use(requestContext(services.logger));
  // Routes speaking another wire format render their errors its way (exact paths only).
  const renderers = new Map(routes.filter((r) => r.renderError && !r.path.includes('{')).map((r) => [`/api${r.path}`, r.renderError!]));
  app.use(errorHandler(services.logger, (path) => renderers.get(path), services.unavailableDependency));
  app.use(urlEncoding());
  // RFC 9728 puts /api/mcp's protected resource metadata under the origin's well-known path; the route under /api answers it.
  app.use((ctx, next) => {
    if (ctx.path === MCP_RESOURCE_METADATA_PATH && ctx.method === 'GET') ctx.path = '/api/mcp/oauth-protected-resource';
    return next();
  });
  // JSON, form and text bodies; the exact text stays in `request.rawBody` (signed inbound webhooks).
  const bodyLimits = new Map(routes.filter((r) => r.bodyLimitBytes && !r.path.includes('{')).map((r) => [`${r.method} /api${r.path}`, r.bodyLimitBytes!(services.config)]));
  app.use(bodyParser({ limit: services.config.BODY_LIMIT_BYTES, limitOf: (ctx) => bodyLimits.get(`${ctx.method} ${ctx.path}`) }));

  router.get('/openapi.json', (ctx) => {
    ctx.body = openapi();
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = docs();
  });
  router.get('/docs/assets/:name', (ctx) => {
    const asset = assets().get(ctx.params.name!);
    if (!asset) return; // 404 ROUTE_NOT_FOUND
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = asset.body;
  });

  for (const route of routes) {
    router.register(toKoaPath(route.path), [route.method], async (ctx) => {
      ctx.state.routeTemplate = route.path; // the metrics' label (http-metrics.ts)
      // Who before what: an anonymous caller learns nothing about the input a route expects.
      const altCredential = route.credentialHeader && !ctx.get('authorization') && ctx.get(route.credentialHeader) ? `Bearer ${ctx.get(route.credentialHeader)}` : undefined;
      if (route.auth === 'bearer') ctx.state.principal = await services.auth.authenticate(ctx.get('authorization') || altCredential);
      const params = parsePart('params', route.params, ctx.params);
      if (route.permission && ctx.state.principal) {
        const pathOrg = route.path.includes('{orgId}') ? (params as { orgId?: string }).orgId : undefined;
        ctx.state.role = await services.auth.authorize(ctx.state.principal, route.permission as RequiredPermission, pathOrg);
      }
      const query = parsePart('query', route.query, ctx.query);
      // A route with a body schema takes JSON (or a form, as OAuth clients send): text, multipart or untyped bodies are 415.
      const hasContent = Number(ctx.get('content-length') || 0) > 0 || (Boolean(ctx.get('transfer-encoding')) && !ctx.get('content-length'));
      if (route.body && hasContent && ctx.is('application/json', '+json', 'application/x-www-form-urlencoded') === false) {
        throw new StatusError(415, 'UNSUPPORTED_MEDIA_TYPE', `the body must be application/json, not ${ctx.get('content-type') || 'untyped'}`, { field: 'headers.content-type' });
      }
      const body = parsePart('body', route.body, route.body ? (ctx.request.body ?? {}) : undefined);
      const command: CommandContext = {
        actorId: ctx.state.principal?.userId ?? null,
        orgId: ctx.state.principal?.orgId ?? null,
        workspaceId: ctx.state.principal?.workspaceId ?? null,
        correlationId: ctx.get('x-correlation-id') || ctx.state.requestId,
        causationId: null,
        requestId: ctx.state.requestId,
        now: services.now(),
      };
      const input: RouteInput<unknown, unknown, unknown> = {
        principal: ctx.state.principal ?? null,
        params,
        query,
        body,
        koa: ctx,
        services,
        command,
        settle: async (position, streamId) => {
          if (position === null) return;
          const settled = await services.projections.waitFor(position, streamId, services.config.READ_YOUR_WRITES_TIMEOUT_MS);
          // The write stands either way; the header tells the client a GET may not show it yet. An
          // answer that settled several streams is current only when every one of them was.
          ctx.set('X-Read-Model', readModelAfter(ctx.response.get('X-Read-Model'), settled));
        },
      };
      const reply = await route.handler(input);
      ctx.status = reply.status;
      ctx.body = reply.body;
      for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
    });
  }

  app.use(router.routes());
  app.use(allowedMethods());
  return app;
}

/** The X-Read-Model of an answer after one more settle: pending once any stream it wrote was not projected in time. */
export function readModelAfter(previous: string | undefined, settled: boolean): 'current' | 'pending' {
  return settled && previous !== 'pending' ? 'current' : 'pending';
}
