import type { Middleware } from 'koa';
import { DomainError } from '../../domain/shared/decider.js';
import type { UnavailableDependency } from '../../ports/availability.js';
import type { Logger } from '../../ports/logger.js';
import { DuplicateKeyError, InvalidCursorError } from '../../ports/read-store.js';
import { LlmProviderError } from '../../ports/llm-errors.js';
import { errorBody, httpStatusOf, StatusError } from '../errors.js';
import type { ErrorRenderer } from '../route.js';

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message: string;
}

/** A dependency that did not answer: the client may send the request again after this long. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Maps every failure to the error body of DESIGN.md §7; only unexpected errors are 500 and logged
 * with their stack. A server we depend on that did not answer (read store, key-value store, bus)
 * is 503 SERVICE_UNAVAILABLE with Retry-After: nothing was acknowledged, the request may be repeated.
 */
export function errorHandler(logger: Logger, rendererFor: (path: string) => ErrorRenderer | undefined = () => undefined, unavailable: UnavailableDependency = () => null): Middleware {
  return async (ctx, next) => {
    // A route speaking another API's wire format (renderError) gets its errors in that format.
    const render = (status: number, body: ReturnType<typeof errorBody>) => rendererFor(ctx.path)?.(status, body.error) ?? body;
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = render(404, errorBody('ROUTE_NOT_FOUND', `no operation ${ctx.method} ${ctx.path}`));
      } else if (ctx.status === 405 && ctx.body === undefined) {
        ctx.body = render(405, errorBody('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}`));
        ctx.status = 405;
      }
    } catch (err) {
      const dependency = unavailable(err);
      const [status, body] = dependency
        ? [503, errorBody('SERVICE_UNAVAILABLE', `the ${dependency} did not answer; try again shortly`, { dependency, retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS })]
        : describe(err);
      const retryAfter = (body.error.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
      if ((status === 429 || status === 503) && retryAfter) ctx.set('Retry-After', String(retryAfter));
      ctx.status = status;
      ctx.body = render(status, body);
      if (dependency) logger.warn({ error: (err as Error).message, dependency, requestId: ctx.state.requestId }, 'request failed: a dependency is unavailable');
      else if (status >= 500) logger.error({ err, requestId: ctx.state.requestId }, 'request failed');
    }
  };
}

function describe(err: unknown): [number, ReturnType<typeof errorBody>] {
  if (err instanceof StatusError) return [err.status, errorBody(err.code, err.message, err.details)];
  // An LLM provider's failure a route did not translate: the provider's fault (502), or 400 when none is configured, as api/routes/llm.ts answers.
  if (err instanceof LlmProviderError) return [err.code === 'PROVIDER_NOT_CONFIGURED' ? 400 : 502, errorBody(err.code, err.message, err.toDetails())];
  if (err instanceof DomainError) return [httpStatusOf(err), errorBody(err.code, err.message, err.details)];
  if (err instanceof InvalidCursorError) return [400, errorBody('INVALID_CURSOR', err.message, { field: 'query.cursor' })];
  if (err instanceof DuplicateKeyError) return [409, errorBody('DUPLICATE', err.message)];
  const e = err as HttpishError;
  const status = e?.status ?? e?.statusCode;
  if (status === 413 || e?.type === 'entity.too.large') return [413, errorBody('PAYLOAD_TOO_LARGE', 'request body is larger than the limit')];
  if (e?.type === 'entity.parse.failed' || (status === 400 && /JSON|parse/i.test(e?.message ?? ''))) {
    return [400, errorBody('INVALID_JSON', 'request body is not valid JSON', { field: 'body' })];
  }
  if (e?.type === 'encoding.unsupported' || status === 415) return [415, errorBody('UNSUPPORTED_MEDIA_TYPE', e.message)];
  if (status && status >= 400 && status < 500 && e.expose) return [status, errorBody('BAD_REQUEST', e.message)];
  return [500, errorBody('INTERNAL_ERROR', 'an unexpected error occurred')];
}
