import type { Middleware } from 'koa';
import { ATTR, markError, SpanKind, startSpan, tracingEnabled, withContext } from '../../lib/tracing.js';
import { routeOf } from './http-metrics.js';

/**
 * A SERVER span per request, continuing the caller's W3C `traceparent`, named by the route
 * template (`POST /api/public/flows/{flowId}/trigger`) so names stay bounded. The path is recorded
 * without its query (tokens may ride there); no header, body or credential is ever an attribute.
 * Everything the request does (commands, the events they append, a sync run) runs inside it.
 * Outermost, so the status is the one the error handler chose. Without tracing: `next` as is.
 */
export function tracing(): Middleware {
  return async (ctx, next) => {
    if (!tracingEnabled()) return next();
    const started = startSpan(ctx.method, {
      kind: SpanKind.SERVER,
      traceparent: ctx.get('traceparent') || undefined,
      attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path, 'url.scheme': ctx.protocol },
    });
    if (!started) return next();
    const { span } = started;
    try {
      await withContext(started.context, next);
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const route = routeOf(ctx.state.routeTemplate, matched);
      const template = route === 'unmatched' ? undefined : ctx.state.routeTemplate ? `/api${route}` : route;
      if (template) span.updateName(`${ctx.method} ${template}`);
      span.setAttributes({
        'http.response.status_code': ctx.status,
        ...(template ? { 'http.route': template } : {}),
        ...(ctx.state.requestId ? { [ATTR.requestId]: String(ctx.state.requestId) } : {}),
      });
      if (ctx.status >= 500) markError(span, `HTTP ${ctx.status}`);
      span.end();
    }
  };
}
