import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { StatusError } from '../errors.js';

/** Where `ctx.request.body` of a parsed body keeps the exact text received (signed webhooks verify it). */
export const UNPARSED_BODY = Symbol.for('unparsedBody');

declare module 'koa' {
  interface Request {
    /** The parsed JSON, form or text body of a POST, PUT or PATCH; undefined when none was read (see bodyParser). */
    body?: unknown;
    /** The body's exact text, as received after decompression: signed inbound webhooks verify it. */
    rawBody?: string;
  }
}

const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads JSON, form and text bodies (POST, PUT, PATCH) into `ctx.request.body`, with the text in
 * `ctx.request.rawBody`. Every failure is one of ours: larger than `limit` (counted after
 * decompression) → 413 PAYLOAD_TOO_LARGE; bytes that are not UTF-8 → 400 INVALID_ENCODING; JSON that
 * does not parse → 400 INVALID_JSON; a Content-Encoding other than identity, gzip, deflate or br →
 * 415 UNSUPPORTED_CONTENT_ENCODING. Multipart and other types are left unread for the route
 * (`api/multipart.ts` streams multipart); a route with a JSON body schema refuses them with 415 (app.ts).
 */
export function bodyParser(options: { limit: number; limitOf?(ctx: Context): number | undefined }): Middleware {
  return async (ctx, next) => {
    if (!PARSED_METHODS.has(ctx.method) || !ctx.request.type) return next();
    const kind = ctx.is('application/json', '+json') ? 'json' : ctx.is('application/x-www-form-urlencoded') ? 'form' : ctx.is('text/*') ? 'text' : null;
    if (!kind) return next();
    const text = await readText(ctx, options.limitOf?.(ctx) ?? options.limit);
    let parsed: unknown;
    if (kind === 'json') {
      if (text.trim() === '') parsed = undefined;
      else {
        try {
          parsed = JSON.parse(text);
        } catch (err) {
          throw new StatusError(400, 'INVALID_JSON', `request body is not valid JSON: ${(err as Error).message}`, { field: 'body' });
        }
      }
    } else if (kind === 'form') parsed = Object.fromEntries(new URLSearchParams(text));
    else parsed = text;
    if (parsed !== null && typeof parsed === 'object') Object.defineProperty(parsed, UNPARSED_BODY, { value: text, enumerable: false });
    ctx.request.body = parsed;
    ctx.request.rawBody = text;
    return next();
  };
}

function decoded(ctx: Context): Readable {
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  switch (encoding) {
    case 'identity':
      return ctx.req;
    case 'gzip':
    case 'x-gzip':
      return ctx.req.pipe(createGunzip());
    case 'deflate':
      return ctx.req.pipe(createInflate());
    case 'br':
      return ctx.req.pipe(createBrotliDecompress());
    default:
      throw new StatusError(415, 'UNSUPPORTED_CONTENT_ENCODING', `Content-Encoding ${encoding} is not supported (identity, gzip, deflate, br)`, { field: 'headers.content-encoding' });
  }
}

async function readText(ctx: Context, limit: number): Promise<string> {
  const declared = Number(ctx.get('content-length') || NaN);
  const tooLarge = () => new StatusError(413, 'PAYLOAD_TOO_LARGE', `request body is larger than the limit (${limit} bytes)`, { field: 'body', limit });
  if (declared > limit) throw tooLarge();
  const stream = decoded(ctx);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge();
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof StatusError) {
      ctx.req.resume(); // drain what is left so the answer can be read
      throw err;
    }
    if (stream !== ctx.req) throw new StatusError(400, 'INVALID_CONTENT_ENCODING', `the body is not valid ${ctx.get('content-encoding')}`, { field: 'body' });
    throw new StatusError(400, 'BODY_READ_FAILED', 'the request body could not be read', { field: 'body' });
  }
  const bytes = Buffer.concat(chunks);
  const charset = (ctx.request.charset || 'utf-8').toLowerCase();
  if (!['utf-8', 'utf8', 'us-ascii', 'ascii'].includes(charset)) {
    throw new StatusError(415, 'UNSUPPORTED_CHARSET', `charset ${charset} is not supported: send UTF-8`, { field: 'headers.content-type' });
  }
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw new StatusError(400, 'INVALID_ENCODING', 'the request body is not valid UTF-8', { field: 'body' });
  }
}
