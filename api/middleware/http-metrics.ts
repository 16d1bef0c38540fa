import type { Middleware } from 'koa';
import type { Metrics } from '../../ports/metrics.js';

/**
 * Times every request and records it by route template (`/flows/{flowId}`, set by the route
 * table's handler in app.ts), never by raw path, so the series stay bounded. Paths outside the
 * table keep the router's template (`/openapi.json`); a path no route matched is `unmatched`.
 * Outermost, so the status is the one the error handler chose.
 */
export function httpMetrics(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const begin = performance.now();
    try {
      await next();
    } finally {
      metrics.observeHttp(routeOf(ctx.state.routeTemplate, (ctx as { _matchedRoute?: unknown })._matchedRoute), ctx.method, ctx.status, (performance.now() - begin) / 1000);
    }
  };
}

export function routeOf(template: unknown, matched: unknown): string {
  if (typeof template === 'string') return template;
  if (typeof matched === 'string') return matched.replace(/^\/api(?=\/|$)/, '').replace(/:(\w+)/g, '{$1}') || '/';
  return 'unmatched';
}
