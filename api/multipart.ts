import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { DomainError } from '../domain/shared/decider.js';

/**
 * Streaming multipart/form-data (busboy). koa-body leaves multipart bodies unread (`multipart` is off
 * in api/app.ts), so a route that declares `multipart` reads `ctx.req` here. Every limit is enforced
 * while the bytes arrive: a file past its bound is refused as soon as the bound is crossed (the rest
 * of the request is discarded by Node, never kept), fields are bounded in number and size, each file
 * field may appear once, and nothing is accumulated beyond what the caller asked to collect.
 *
 * Refusals (stable codes):
 * - 415 UNSUPPORTED_MEDIA_TYPE: the request is not multipart/form-data;
 * - 413 FILE_TOO_LARGE (details `{field, maxBytes}`): a file is larger than its bound (or the declared
 *   Content-Length is larger than everything allowed together);
 * - 400 FIELD_TOO_LARGE / TOO_MANY_FIELDS / UNEXPECTED_FIELD / UNEXPECTED_FILE / DUPLICATE_FILE /
 *   FILE_TYPE_NOT_ALLOWED / MALFORMED_MULTIPART, with `details.field` naming `body.<name>` where there is one.
 */

export interface MultipartFileSpec {
  /** Refused with 413 FILE_TOO_LARGE once more bytes than this arrived. */
  maxBytes: number;
  /** Media types accepted for this part (as the client declares them); the content is checked by whoever reads it. */
  contentTypes?: string[];
}

export interface MultipartSpec<R = Uint8Array> {
  /** Text fields allowed, with their maximum size in bytes. Others: 400 UNEXPECTED_FIELD (unless `ignoreUnknownFields`). */
  fields: Record<string, { maxBytes: number }>;
  /** File fields allowed. Any other file part: 400 UNEXPECTED_FILE. */
  files: Record<string, MultipartFileSpec>;
  /** At most this many text fields (default: the number of declared fields + 4). */
  maxFields?: number;
  ignoreUnknownFields?: boolean;
  /**
   * Where a file's bytes go, as they arrive (the object store's `put`, a hash…). The stream throws
   * FILE_TOO_LARGE past the bound, so a consumer never sees more. Default: collected in memory up to the bound.
   */
  onFile?: (file: IncomingFileInfo, body: AsyncIterable<Uint8Array>) => Promise<R>;
}

export interface IncomingFileInfo {
  field: string;
  /** The client's name for the file: informative only, never a path. */
  filename: string;
  contentType: string;
}

export interface ReceivedFile<R> extends IncomingFileInfo {
  size: number;
  /** What `onFile` returned (by default the bytes). */
  value: R;
}

export interface MultipartResult<R> {
  fields: Record<string, string>;
  files: Record<string, ReceivedFile<R>>;
}

/** 415 through the error handler's status mapping (not a domain refusal). */
export class UnsupportedMediaTypeError extends Error {
  readonly status = 415;
  readonly expose = true;
}

const fieldError = (code: string, message: string, field: string, kind: 'invalid' | 'too_large' = 'invalid', extra: Record<string, unknown> = {}) =>
  new DomainError(code, message, kind, { field: `body.${field}`, ...extra });

export function isMultipart(req: IncomingMessage): boolean {
  return /^multipart\/form-data\s*;/i.test(req.headers['content-type'] ?? '');
}

/** Parses `req` as multipart/form-data under `spec`; resolves once every part was read and every file consumed. */
export function parseMultipart<R = Uint8Array>(req: IncomingMessage, spec: MultipartSpec<R>): Promise<MultipartResult<R>> {
  if (!isMultipart(req)) {
    return Promise.reject(new UnsupportedMediaTypeError('expected multipart/form-data with a boundary'));
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') return Promise.reject(new UnsupportedMediaTypeError(`Content-Encoding ${encoding} is not supported for uploads (identity only)`));
  const fieldNames = Object.keys(spec.fields);
  const fileNames = Object.keys(spec.files);
  const maxFields = spec.maxFields ?? fieldNames.length + 4;
  const maxFieldBytes = Math.max(1, ...Object.values(spec.fields).map((f) => f.maxBytes));
  const maxFileBytes = Math.max(0, ...Object.values(spec.files).map((f) => f.maxBytes));
  // Everything allowed together plus generous room for part headers and boundaries.
  const declared = Number(req.headers['content-length']);
  const ceiling = maxFileBytes * fileNames.length + maxFieldBytes * maxFields + 64 * 1024;
  if (Number.isFinite(declared) && declared > ceiling) {
    return Promise.reject(new DomainError('FILE_TOO_LARGE', `the request is larger than allowed (${ceiling} bytes)`, 'too_large', { maxBytes: ceiling }));
  }

  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        // One byte past the largest bound: crossing a bound is then visible to the counting stream below;
        // one file more than declared, so a repeated file field is refused naming the field.
        limits: { fileSize: maxFileBytes + 1, files: fileNames.length + 1, fields: maxFields, fieldSize: maxFieldBytes + 1, parts: fileNames.length + 1 + maxFields, headerPairs: 20, fieldNameSize: 100 },
      });
    } catch (err) {
      reject(new DomainError('MALFORMED_MULTIPART', (err as Error).message, 'invalid', { field: 'body' }));
      return;
    }
    const fields: Record<string, string> = {};
    const files: Record<string, ReceivedFile<R>> = {};
    const pending: Promise<void>[] = [];
    let failed = false;

    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      // Stop reading: Node discards whatever the client still sends once the answer is written.
      req.unpipe(bb);
      bb.removeAllListeners('close');
      bb.on('error', () => {});
      reject(err);
    };

    // busboy hands `name` undefined for a part named "" (and any name may be "__proto__"): only own, non-empty names count.
    const own = <T>(table: Record<string, T>, name: unknown): T | undefined => (typeof name === 'string' && name !== '' && Object.hasOwn(table, name) ? table[name] : undefined);

    bb.on('field', (rawName, value, info) => {
      if (failed) return;
      const name = typeof rawName === 'string' ? rawName : '';
      const allowed = own(spec.fields, name);
      if (!allowed) {
        if (spec.ignoreUnknownFields) return;
        return fail(fieldError('UNEXPECTED_FIELD', `unexpected field "${name.slice(0, 100)}"`, name.slice(0, 100)));
      }
      if (Object.hasOwn(fields, name)) return fail(fieldError('DUPLICATE_FIELD', `field "${name}" was sent more than once`, name));
      if (info.valueTruncated || Buffer.byteLength(value) > allowed.maxBytes) {
        return fail(fieldError('FIELD_TOO_LARGE', `field "${name}" is longer than ${allowed.maxBytes} bytes`, name, 'invalid', { maxBytes: allowed.maxBytes }));
      }
      fields[name] = value;
    });

    bb.on('file', (rawName, stream, info) => {
      if (failed) {
        stream.resume();
        return;
      }
      const name = typeof rawName === 'string' ? rawName : '';
      const fileSpec = own(spec.files, name);
      if (!fileSpec) {
        stream.resume();
        return fail(fieldError('UNEXPECTED_FILE', `unexpected file field "${name.slice(0, 100)}"`, name.slice(0, 100)));
      }
      if (Object.hasOwn(files, name) || pending.length >= fileNames.length) {
        stream.resume();
        return fail(fieldError('DUPLICATE_FILE', `only one file may be sent as "${name}"`, name));
      }
      const contentType = (info.mimeType || 'application/octet-stream').toLowerCase();
      if (fileSpec.contentTypes && !fileSpec.contentTypes.includes(contentType)) {
        stream.resume();
        return fail(fieldError('FILE_TYPE_NOT_ALLOWED', `"${name}" must be one of ${fileSpec.contentTypes.join(', ')}`, name, 'invalid', { allowed: fileSpec.contentTypes }));
      }
      const fileInfo: IncomingFileInfo = { field: name, filename: (info.filename ?? '').slice(0, 255), contentType };
      let size = 0;
      const maxBytes = fileSpec.maxBytes;
      const tooLarge = () => fieldError('FILE_TOO_LARGE', `"${name}" is larger than ${maxBytes} bytes`, name, 'too_large', { maxBytes });
      async function* counted(): AsyncIterable<Uint8Array> {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > maxBytes) throw tooLarge();
          yield chunk;
        }
        if ((stream as { truncated?: boolean }).truncated) throw tooLarge();
      }
      const consume = spec.onFile ? spec.onFile(fileInfo, counted()) : (collect(counted()) as Promise<unknown> as Promise<R>);
      const placeholder = { ...fileInfo, size: 0, value: undefined as unknown as R };
      files[name] = placeholder;
      pending.push(
        consume.then(
          (value) => {
            placeholder.size = size;
            placeholder.value = value;
          },
          (err) => {
            stream.resume();
            fail(err);
          },
        ),
      );
    });

    bb.on('fieldsLimit', () => fail(new DomainError('TOO_MANY_FIELDS', `at most ${maxFields} fields`, 'invalid', { field: 'body', maxFields })));
    bb.on('filesLimit', () => fail(new DomainError('DUPLICATE_FILE', `at most ${fileNames.length} file(s), one per field`, 'invalid', { field: 'body' })));
    bb.on('partsLimit', () => fail(new DomainError('TOO_MANY_FIELDS', 'too many parts', 'invalid', { field: 'body' })));
    bb.on('error', (err) => fail(new DomainError('MALFORMED_MULTIPART', `malformed multipart body: ${(err as Error).message}`, 'invalid', { field: 'body' })));
    bb.on('close', () => {
      if (failed) return;
      Promise.all(pending).then(() => {
        if (!failed) resolve({ fields, files });
      });
    });
    req.on('aborted', () => fail(new DomainError('REQUEST_ABORTED', 'the client went away during the upload', 'invalid', { field: 'body' })));
    req.on('error', (err) => fail(new DomainError('MALFORMED_MULTIPART', err.message, 'invalid', { field: 'body' })));
    req.pipe(bb);
  });
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    total += chunk.length;
  }
  return Buffer.concat(chunks, total);
}
