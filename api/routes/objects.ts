import { z } from 'zod';
import { NotFoundError } from '../errors.js';
import { defineRoute } from '../route.js';

/**
 * Downloads through the local object store's signed URLs (infra/object-store/local.ts): whoever holds
 * the URL may GET the file until it expires. Always an attachment, never rendered in our origin.
 */
export const objectRoutes = [
  defineRoute({
    method: 'GET',
    path: '/objects/{key}',
    operationId: 'downloadObject',
    summary: 'download a stored file through a signed, expiring URL (local object store)',
    tag: 'Objects',
    auth: 'none',
    params: z.strictObject({ key: z.string().min(1).max(512) }),
    query: z.strictObject({
      expires: z.string().regex(/^\d{1,12}$/),
      sig: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
      name: z.string().max(200).optional(),
    }),
    responses: {
      200: { description: 'the file, as an attachment with its stored Content-Type' },
      403: { description: 'URL_EXPIRED (ask for a new URL) or URL_INVALID (the signature does not match)' },
      404: { description: 'OBJECT_NOT_FOUND: no such file (deleted), or this store does not serve downloads itself' },
    },
    async handler({ params, query, services }) {
      if (!services.objects.openSigned) throw new NotFoundError('object', 'OBJECT_NOT_FOUND');
      const file = await services.objects.openSigned(params.key, query);
      const name = (file.downloadName ?? params.key.split('/').pop() ?? 'download').replace(/[^\x20-\x7e]|["\\]/g, '_');
      return {
        status: 200,
        body: Buffer.from(file.body),
        headers: {
          'Content-Type': file.contentType,
          'Content-Disposition': `attachment; filename="${name}"`,
          'X-Content-Type-Options': 'nosniff',
          'Content-Security-Policy': "default-src 'none'; sandbox",
          'Cache-Control': 'private, no-store',
        },
      };
    },
  }),
];
