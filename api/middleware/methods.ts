import type { Middleware } from 'koa';
import { StatusError } from '../errors.js';

interface MatchedLayer {
  methods: string[];
}

/**
 * After the router (any route table, nothing listed by hand): a path some route matches with another
 * method answers 405 METHOD_NOT_ALLOWED with `Allow` (TRACE, CONNECT-less unknowns and all), and
 * OPTIONS answers 204 with `Allow`; a path no route matches stays 404 ROUTE_NOT_FOUND
 * (error-handler.ts). Replaces the router's `allowedMethods()`, which answers 501 text.
 */
export function allowedMethods(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const matched = ((ctx as { matched?: MatchedLayer[] }).matched ?? []).flatMap((layer) => layer.methods);
    if (matched.length === 0) return;
    const allow = [...new Set([...matched, 'OPTIONS'])].join(', ');
    ctx.set('Allow', allow);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    throw new StatusError(405, 'METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, { allow: allow.split(', ') });
  };
}
