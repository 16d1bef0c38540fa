import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { CV_MAX_BYTES, changeApplicationStatus, deleteApplication, dedupeInput, submitApplication, vacancyForApplication, type CareersPorts } from '../../commands/careers.js';
import { ALLOWED_TRANSITIONS, applicationStatusSchema, applicationStreamId } from '../../domain/careers/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { Services } from '../../ports/services.js';
import { getApplication, listApplications, type OpenedApplication } from '../../projections/careers.js';
import { orgExists } from '../../projections/orgs.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { parseMultipart } from '../multipart.js';
import { defineRoute } from '../route.js';
import { parsePart } from '../validation.js';
import { pageQuery } from './pagination.js';

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

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const idPattern = /^[A-Za-z0-9_-]{1,100}$/;
const ANSWERS_MAX_BYTES = 64 * 1024;

/** The form's text fields once parsed (the CV is the file part `cv`). `website` is the honeypot: people leave it empty. */
const applicationForm = z.strictObject({
  vacancyId: z.string().regex(idPattern, 'letters, digits, "_" and "-", at most 100'),
  name: z.string().trim().min(1).max(200),
  email: z.email().max(254),
  coverLetter: z.string().max(20_000).optional(),
  orgId: z.string().regex(idPattern).optional(),
  answers: z.string().max(ANSWERS_MAX_BYTES).optional(),
  website: z.string().max(1000).optional(),
});
/** The answers to a vacancy's questions arrive as one JSON field (the form's questions are the vacancy's, not ours). */
const answersSchema = z.record(z.string().max(100), z.string().max(20_000));

function parseAnswers(text: string | undefined): Record<string, string> {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationError([{ field: 'body.answers', message: 'must be a JSON object of answers by question name' }]);
  }
  const parsed = answersSchema.safeParse(value);
  if (!parsed.success || Array.isArray(value)) throw new ValidationError([{ field: 'body.answers', message: 'must be a JSON object of text answers by question name' }]);
  return parsed.data;
}

const formFields = {
  vacancyId: { maxBytes: 100 },
  name: { maxBytes: 800 },
  email: { maxBytes: 254 },
  coverLetter: { maxBytes: 80_000 },
  orgId: { maxBytes: 100 },
  answers: { maxBytes: ANSWERS_MAX_BYTES },
  website: { maxBytes: 1000 },
};

const statusChangeSchema = z.object({ from: applicationStatusSchema, to: applicationStatusSchema, note: z.string().nullable(), by: z.string(), at: z.string() });
const applicationSchema = z.object({
  id: z.string(),
  vacancyId: z.string(),
  status: applicationStatusSchema,
  /** True while a deletion is under way (its personal fields are already null); repeating the DELETE finishes it. */
  deleting: z.boolean(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  coverLetter: z.string().nullable(),
  /** Answers to the vacancy's questions by name (`{}` when it asked none); null once shredded. */
  answers: z.record(z.string(), z.string()).nullable(),
  /** The first 500 characters of the CV's text (the whole text is searched with `q`). */
  cvExcerpt: z.string().nullable(),
  cv: z.object({
    filename: z.string().nullable(),
    size: z.number(),
    pages: z.number(),
    textStatus: z.enum(['ok', 'no_text']),
    sha256: z.string(),
    downloadUrl: z.string(),
    downloadExpiresAt: z.string(),
  }),
  history: z.array(statusChangeSchema),
  receivedAt: z.string(),
  updatedAt: z.string(),
  version: z.number(),
});
const applicationIdParams = z.strictObject({ applicationId: z.string().regex(/^[A-Za-z0-9-]{1,64}$/) });
const receivedSchema = z.object({ success: z.literal(true), applicationId: z.string(), status: z.literal('received'), duplicate: z.boolean() });

const portsOf = (services: Services): CareersPorts => ({ eventStore: services.eventStore, objects: services.objects, pdf: services.pdf, vault: services.personalData });

async function present(services: Services, a: OpenedApplication) {
  const url = cvDownloadUrl(services, a.orgId, a.id);
  return {
    id: a.id,
    vacancyId: a.vacancyId,
    status: a.status,
    deleting: a.deleting,
    name: a.name,
    email: a.email,
    coverLetter: a.coverLetter,
    answers: a.answers,
    cvExcerpt: a.cvText === null ? null : a.cvText.slice(0, 500),
    cv: { filename: a.cvFilename, size: a.cv.size, pages: a.cv.pages, textStatus: a.cv.textStatus, sha256: a.cv.sha256, downloadUrl: url.url, downloadExpiresAt: url.expiresAt },
    history: a.history,
    receivedAt: a.receivedAt,
    updatedAt: a.updatedAt,
    version: a.version,
  };
}

export const activeOrg = (orgId: string | null | undefined): string => {
  if (!orgId) throw new DomainError('NO_ACTIVE_ORGANIZATION', 'switch to an organization first', 'forbidden');
  return orgId;
};

export const careerRoutes = [
  defineRoute({
    method: 'POST',
    path: '/careers/applications',
    operationId: 'submitApplication',
    summary: 'submit an application to an open vacancy (multipart: vacancyId, name, email, coverLetter?, answers?, cv as PDF ≤ 10 MiB); it goes to the vacancy\'s organization',
    tag: 'Careers',
    auth: 'none',
    multipart: z.object({
      vacancyId: z.string().meta({ description: 'the vacancy applied to (an open one: GET /public/careers/vacancies)' }),
      orgId: z.string().optional().meta({ description: "older clients: the vacancy's organization (else CAREERS_ORG_ID, when set); must agree with the vacancy's (400 VACANCY_ORG_MISMATCH)" }),
      name: z.string().max(200),
      email: z.email().max(254),
      coverLetter: z.string().max(20_000).optional(),
      answers: z.string().optional().meta({ description: 'answers to the vacancy\'s `formFields`, a JSON object by question name (≤ 64 KiB): `{"github": "https://…"}`; required ones must be there' }),
      cv: z.file().mime('application/pdf').max(CV_MAX_BYTES).meta({ description: 'the CV, a PDF of at most 10 MiB and 50 pages' }),
      website: z.string().optional().meta({ description: 'honeypot: leave empty (hidden in the form)' }),
    }),
    responses: {
      201: { description: 'received', schema: receivedSchema },
      200: { description: 'the same email applied to this vacancy less than 24 hours ago: the first application\'s id, nothing stored', schema: receivedSchema },
      404: { description: "VACANCY_NOT_FOUND: no such vacancy (or its organization is gone)" },
      409: { description: 'VACANCY_CLOSED: the vacancy takes no more applications' },
      413: { description: 'FILE_TOO_LARGE: the CV is larger than 10 MiB (refused while streaming)' },
      429: { description: 'RATE_LIMITED: too many applications from this address or for this email (Retry-After)' },
    },
    async handler({ koa, services, command }) {
      const config = services.config;
      await services.rateLimiter.hit(`careers:ip:${koa.ip}`, config.CAREERS_RATE_PER_IP_HOUR, HOUR);
      const form = await parseMultipart(koa.req, {
        fields: formFields,
        files: { cv: { maxBytes: CV_MAX_BYTES, contentTypes: ['application/pdf', 'application/x-pdf', 'application/octet-stream'] } },
      });
      if (!form.files.cv) throw new ValidationError([{ field: 'body.cv', message: 'required: the CV as a PDF' }]);
      const fields = parsePart('body', applicationForm, form.fields);
      const answers = parseAnswers(fields.answers);
      // Per email too (a keyed hash: the address itself is not kept in the limiter).
      await services.rateLimiter.hit(`careers:email:${services.personalData.blindIndex(dedupeInput('', '', fields.email))}`, config.CAREERS_RATE_PER_EMAIL_DAY, DAY);
      if (fields.website) {
        // A bot filled the hidden field: it is told what a person is told; nothing is stored.
        return { status: 201, body: { success: true, applicationId: randomUUID(), status: 'received', duplicate: false } };
      }
      // The organization follows from the vacancy; a form's orgId (or CAREERS_ORG_ID) must agree with it.
      const target = await vacancyForApplication(services.eventStore, fields.vacancyId, fields.orgId ?? config.CAREERS_ORG_ID ?? null, answers);
      const orgId = target.orgId;
      if (!(await orgExists(services.readStore, orgId))) throw new NotFoundError('vacancy', 'VACANCY_NOT_FOUND');
      const applicationId = services.newId();
      const result = await submitApplication(portsOf(services), { ...command, orgId, workspaceId: null }, {
        applicationId,
        orgId,
        vacancyId: fields.vacancyId,
        name: fields.name,
        email: fields.email,
        coverLetter: fields.coverLetter ?? null,
        answers: target.answers,
        cv: { bytes: form.files.cv.value, filename: form.files.cv.filename || 'cv.pdf' },
      });
      return { status: result.duplicate ? 200 : 201, body: { success: true, applicationId: result.applicationId, status: 'received', duplicate: result.duplicate } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/careers/applications',
    operationId: 'listApplications',
    summary: "the active organization's applications, newest first, each with a signed, expiring CV download URL",
    tag: 'Careers',
    auth: 'bearer',
    permission: 'manage_members',
    query: pageQuery.extend({
      vacancyId: z.string().regex(idPattern).optional().meta({ description: "only this vacancy's applications" }),
      status: applicationStatusSchema.optional(),
      q: z.string().trim().min(1).max(200).optional(),
    }),
    responses: {
      200: { description: 'a page (with `q`, a page may hold fewer than `limit` items while `nextCursor` leads on)', schema: z.object({ success: z.literal(true), items: z.array(applicationSchema), nextCursor: z.string().nullable() }) },
    },
    async handler({ query, principal, services }) {
      const orgId = activeOrg(principal?.orgId);
      const page = await listApplications(services.readStore, services.personalData, { orgId, vacancyId: query.vacancyId, status: query.status, q: query.q }, query.limit, query.cursor ?? null);
      return { status: 200, body: { success: true, items: await Promise.all(page.items.map((a) => present(services, a))), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/careers/applications/{applicationId}',
    operationId: 'getApplication',
    summary: "one application of the active organization, as the list shows it (answers, CV excerpt and a signed, expiring CV URL)",
    tag: 'Careers',
    auth: 'bearer',
    permission: 'manage_members',
    params: applicationIdParams,
    responses: {
      200: { description: 'the application (`deleting: true` while a deletion is under way)', schema: z.object({ success: z.literal(true), application: applicationSchema }) },
      404: { description: "APPLICATION_NOT_FOUND (missing, deleted or another organization's)" },
    },
    async handler({ params, principal, services }) {
      const application = await getApplication(services.readStore, services.personalData, activeOrg(principal?.orgId), params.applicationId);
      if (!application) throw new NotFoundError('application', 'APPLICATION_NOT_FOUND');
      return { status: 200, body: { success: true, application: await present(services, application) } };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/careers/applications/{applicationId}/status',
    operationId: 'changeApplicationStatus',
    summary: "move an application along (received → screening → interview → offer → hired; rejected/withdrawn from any open status; rejected → screening); an event with who and why",
    tag: 'Careers',
    auth: 'bearer',
    permission: 'manage_members',
    params: applicationIdParams,
    body: z.strictObject({ status: applicationStatusSchema, note: z.string().trim().max(2000).optional() }),
    responses: {
      200: { description: 'the application after the change', schema: z.object({ success: z.literal(true), application: applicationSchema }) },
      404: { description: "APPLICATION_NOT_FOUND (missing, deleted or another organization's)" },
      409: { description: `APPLICATION_BEING_DELETED (repeat the DELETE to finish it), or INVALID_STATUS_TRANSITION (details: from, to, allowed). Allowed: ${Object.entries(ALLOWED_TRANSITIONS).map(([from, to]) => `${from} → ${to.join('|') || '(none)'}`).join('; ')}` },
    },
    async handler({ params, body, principal, services, command, settle }) {
      const orgId = activeOrg(principal?.orgId);
      const result = await changeApplicationStatus(services.eventStore, command, params.applicationId, body.status, body.note ?? null);
      await settle(result.position, applicationStreamId(params.applicationId));
      const application = await getApplication(services.readStore, services.personalData, orgId, params.applicationId);
      if (!application) throw new NotFoundError('application', 'APPLICATION_NOT_FOUND');
      return { status: 200, body: { success: true, application: await present(services, application) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/careers/applications/{applicationId}',
    operationId: 'deleteApplication',
    summary: "delete an application: its personal fields and its sealed CV are crypto-shredded (its key is dropped), the CV file removed; repeating it finishes a deletion interrupted halfway",
    tag: 'Careers',
    auth: 'bearer',
    permission: 'manage_members',
    params: applicationIdParams,
    responses: {
      200: { description: 'deleted (again: still deleted)', schema: z.object({ success: z.literal(true), applicationId: z.string(), deleted: z.literal(true) }) },
      404: { description: "APPLICATION_NOT_FOUND (missing or another organization's)" },
    },
    async handler({ params, principal, services, command, settle }) {
      activeOrg(principal?.orgId);
      const result = await deleteApplication(portsOf(services), command, params.applicationId, null);
      await settle(result.position, applicationStreamId(params.applicationId));
      return { status: 200, body: { success: true, applicationId: params.applicationId, deleted: true } };
    },
  }),
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
      if (!application || application.deleting) throw new NotFoundError('application', 'APPLICATION_NOT_FOUND');
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
