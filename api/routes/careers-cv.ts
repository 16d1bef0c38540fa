import { z } from 'zod';
import { DomainError } from '../../domain/shared/decider.js';
import type { Services } from '../../ports/services.js';
import { getApplication } from '../../projections/careers.js';
import { NotFoundError } from '../errors.js';
import { defineRoute } from '../route.js';

/**
 * CV downloads. Stored CVs are sealed under their application's key (commands/careers.ts), so the
 * object store's own signed URLs would hand out ciphertext: the list gives instead a URL of this
 * service carrying a sealed, expiring token (AES-256-GCM under ENCRYPTION_KEY, like other sealed
 * values), and this route opens the file with the application's key while it still exists.
 */

interface CvToken {
  /** Purpose tag: another value sealed under the same key can never pass as a download token. */
  t: 'careers-cv';
  a: string;
  o: string;
  /** Expiry, seconds since the epoch. */
  e: number;
}

export function cvDownloadUrl(services: Services, orgId: string, applicationId: string): { url: string; expiresAt: string } {
  const expires = Math.floor(services.now().getTime() / 1000) + services.config.CAREERS_CV_URL_TTL_SECONDS;
  const token: CvToken = { t: 'careers-cv', a: applicationId, o: orgId, e: expires };
  const base = (services.config.PUBLIC_URL ?? '').replace(/\/+$/, '');
  const query = new URLSearchParams({ token: services.sealedBox.seal(JSON.stringify(token)) });
  return { url: `${base}/api/careers/applications/${encodeURIComponent(applicationId)}/cv?${query}`, expiresAt: new Date(expires * 1000).toISOString() };
}

function openToken(services: Services, sealed: string, applicationId: string): CvToken {
  let token: CvToken;
  try {
    token = JSON.parse(services.sealedBox.open(sealed)) as CvToken;
  } catch {
    throw new DomainError('URL_INVALID', 'the download URL is not valid', 'forbidden');
  }
  if (token?.t !== 'careers-cv' || token.a !== applicationId || typeof token.o !== 'string' || typeof token.e !== 'number') {
    throw new DomainError('URL_INVALID', 'the download URL is not valid', 'forbidden');
  }
  if (token.e * 1000 <= services.now().getTime()) throw new DomainError('URL_EXPIRED', 'the download URL has expired; ask for a new one', 'forbidden');
  return token;
}

export const careerCvRoutes = [
  defineRoute({
    method: 'GET',
    path: '/careers/applications/{applicationId}/cv',
    operationId: 'downloadApplicationCv',
    summary: "download an application's CV through the signed, expiring URL of the list (opened with the application's key)",
    tag: 'Careers',
    auth: 'none',
    params: z.strictObject({ applicationId: z.string().regex(/^[A-Za-z0-9-]{1,64}$/) }),
    query: z.strictObject({ token: z.string().regex(/^[A-Za-z0-9_.-]{1,2000}$/).meta({ description: 'the sealed token of `cv.downloadUrl`' }) }),
    responses: {
      200: { description: 'the CV (application/pdf) as an attachment' },
      403: { description: 'URL_EXPIRED (ask for a new URL) or URL_INVALID (not a token of this application)' },
      404: { description: 'APPLICATION_NOT_FOUND: deleted (or being deleted: its key is gone) or never there' },
    },
    async handler({ params, query, services }) {
      const token = openToken(services, query.token, params.applicationId);
      const application = await getApplication(services.readStore, services.personalData, token.o, params.applicationId);
      if (!application) throw new NotFoundError('application', 'APPLICATION_NOT_FOUND');
      const stored = await services.objects.get(application.cv.key);
      if (!stored) throw new NotFoundError('application', 'APPLICATION_NOT_FOUND');
      // Legacy CVs (stored in clear before CVs were sealed) are served as they are.
      const body = application.cv.sealed ? await services.personalData.openBytes(params.applicationId, stored, params.applicationId) : stored;
      if (!body) throw new NotFoundError('application', 'APPLICATION_NOT_FOUND');
      const name = (application.cvFilename ?? 'cv.pdf').replace(/[^\x20-\x7e]|["\\/]/g, '_').slice(0, 120) || 'cv.pdf';
      return {
        status: 200,
        body: Buffer.from(body),
        headers: {
          'Content-Type': 'application/pdf',
          'Content-Disposition': `attachment; filename="${name}"`,
          'X-Content-Type-Options': 'nosniff',
          'Content-Security-Policy': "default-src 'none'; sandbox",
          'Cache-Control': 'private, no-store',
        },
      };
    },
  }),
];
