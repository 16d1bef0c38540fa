import type { Middleware } from 'koa';
import { StatusError } from '../errors.js';

/**
 * Refuses a URL whose percent-encoding is broken or does not decode to UTF-8 (`%E0%A4%A`, `%FF`):
 * 400 INVALID_ENCODING naming the part, before any route reads a parameter that would otherwise
 * arrive undecoded.
 */
export function urlEncoding(): Middleware {
  return async (ctx, next) => {
    if (!decodes(ctx.path)) throw new StatusError(400, 'INVALID_ENCODING', 'the path is not valid percent-encoded UTF-8', { field: 'path' });
    const query = ctx.querystring;
    if (query && !query.split('&').every((part) => decodes(part.replace(/\+/g, ' ')))) {
      throw new StatusError(400, 'INVALID_ENCODING', 'the query string is not valid percent-encoded UTF-8', { field: 'query' });
    }
    return next();
  };
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
