import { z } from 'zod';
import { createVacancy, setVacancyOpen, updateVacancy } from '../../commands/careers-vacancies.js';
import { parseIfMatch } from '../../commands/flows.js';
import type { HandleResult } from '../../commands/handle.js';
import {
  formFieldsSchema, FORM_FIELD_TYPES, vacancyDescriptionSchema, vacancyStatusSchema, vacancyStreamId, vacancyTitleSchema,
  type VacancyEvent, type VacancyState,
} from '../../domain/careers/index.js';
import { getVacancy, listVacancies, type VacancyView } from '../../projections/careers-vacancies.js';
import { orgExists } from '../../projections/orgs.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { defineRoute, type RouteInput } from '../route.js';
import { activeOrg } from './careers.js';
import { pageQuery } from './pagination.js';

/**
 * Vacancies (`vacancy-<id>`): what an organization publishes and applications name. Members with
 * `manage_members` (the people who read applications) publish, change, close and reopen them; every
 * member (`view_resources`) lists them with the closed ones; anyone lists the open ones of an
 * organization and reads one, without an account (the careers page).
 */

const tag = 'Careers';
const idPattern = /^[A-Za-z0-9_-]{1,100}$/;
const vacancyParams = z.strictObject({ vacancyId: z.string().regex(idPattern) });

const formFieldOut = z.object({ name: z.string(), label: z.string(), required: z.boolean(), type: z.enum(FORM_FIELD_TYPES) });
const vacancyOut = z.object({
  id: z.string(),
  orgId: z.string(),
  title: z.string(),
  description: z.string(),
  status: vacancyStatusSchema,
  /** Extra questions of the application form: answered as `answers` (a JSON object by `name`). */
  formFields: z.array(formFieldOut),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int().describe('the vacancy\'s version: its ETag and what If-Match names'),
});
const vacancyReply = z.object({ success: z.literal(true), vacancy: vacancyOut });
const pageReplySchema = z.object({ success: z.literal(true), items: z.array(vacancyOut), nextCursor: z.string().nullable() });

const fromView = (v: VacancyView) => ({
  id: v._id, orgId: v.orgId, title: v.title, description: v.description, status: v.status, formFields: v.formFields, createdAt: v.createdAt, updatedAt: v.updatedAt, version: v.version,
});
const fromState = (s: VacancyState) => ({
  id: s.vacancyId, orgId: s.orgId, title: s.title, description: s.description, status: s.status, formFields: s.formFields, createdAt: s.createdAt, updatedAt: s.updatedAt, version: s.version,
});
const etag = (version: number) => ({ ETag: `"${version}"` });

/** The client's If-Match as a vacancy version (optional); a header that is not one is a 400 naming it. */
function ifMatch(input: Pick<RouteInput<unknown, unknown, unknown>, 'koa'>): number | undefined {
  const expected = parseIfMatch(input.koa.get('if-match') || undefined);
  if (Number.isNaN(expected)) throw new ValidationError([{ field: 'headers.if-match', message: 'must be the vacancy version its ETag gave, e.g. "3"' }]);
  return expected;
}

/** Answers a write with the vacancy as the command left it, once the lists show it too (read your writes). */
async function written(input: RouteInput<unknown, unknown, unknown>, vacancyId: string, result: HandleResult<VacancyState, VacancyEvent>, status = 200) {
  await input.settle(result.position, vacancyStreamId(vacancyId));
  return { status, body: { success: true, vacancy: fromState(result.state) }, headers: etag(result.state.version) };
}

const writeErrors = {
  404: { description: "VACANCY_NOT_FOUND: unknown, or another organization's" },
  412: { description: 'PRECONDITION_FAILED: If-Match names another version of the vacancy (details: expected, actual)' },
};

const toggle = (open: boolean) =>
  defineRoute({
    method: 'POST',
    path: `/careers/vacancies/{vacancyId}/${open ? 'reopen' : 'close'}`,
    operationId: open ? 'reopenVacancy' : 'closeVacancy',
    summary: open ? 'reopen a closed vacancy: it takes applications again (If-Match optional)' : 'close a vacancy: applications to it answer 409 VACANCY_CLOSED; those received stay (If-Match optional; closing a closed one changes nothing)',
    tag,
    auth: 'bearer',
    permission: 'manage_members',
    params: vacancyParams,
    responses: { 200: { description: 'the vacancy as it is now (ETag: its version)', schema: vacancyReply }, ...writeErrors },
    async handler(input) {
      activeOrg(input.principal?.orgId);
      const result = await setVacancyOpen(input.services.eventStore, input.command, input.params.vacancyId, open, ifMatch(input));
      return written(input, input.params.vacancyId, result);
    },
  });

export const careerVacancyRoutes = [
  defineRoute({
    method: 'POST',
    path: '/careers/vacancies',
    operationId: 'createVacancy',
    summary: 'publish a vacancy of the active organization: title, description, open (default) or closed, and up to 20 extra questions for the application form',
    tag,
    auth: 'bearer',
    permission: 'manage_members',
    body: z.strictObject({
      title: vacancyTitleSchema,
      description: vacancyDescriptionSchema.default(''),
      status: vacancyStatusSchema.default('open').meta({ description: '`closed` keeps it unpublished until reopened' }),
      formFields: formFieldsSchema.default([]).meta({ description: 'extra questions: `{name, label, required (false), type: text|textarea|url|email|number (text)}`' }),
    }),
    responses: { 201: { description: 'created (ETag: its version)', schema: vacancyReply } },
    async handler(input) {
      activeOrg(input.principal?.orgId);
      const vacancyId = input.services.newId();
      const result = await createVacancy(input.services.eventStore, input.command, vacancyId, input.body);
      return written(input, vacancyId, result, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/careers/vacancies',
    operationId: 'listVacancies',
    summary: "the active organization's vacancies, open and closed, newest first",
    tag,
    auth: 'bearer',
    permission: 'view_resources',
    query: pageQuery.extend({ status: vacancyStatusSchema.optional() }),
    responses: { 200: { description: 'a page', schema: pageReplySchema } },
    async handler({ query, principal, services }) {
      const orgId = activeOrg(principal?.orgId);
      const page = await listVacancies(services.readStore, { orgId, status: query.status }, query.limit, query.cursor ?? null);
      return { status: 200, body: { success: true, items: page.items.map(fromView), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/careers/vacancies/{vacancyId}',
    operationId: 'getVacancy',
    summary: 'one vacancy of the active organization, open or closed (ETag: its version)',
    tag,
    auth: 'bearer',
    permission: 'view_resources',
    params: vacancyParams,
    responses: { 200: { description: 'the vacancy', schema: vacancyReply }, 404: writeErrors[404] },
    async handler({ params, principal, services }) {
      const vacancy = await getVacancy(services.readStore, params.vacancyId, activeOrg(principal?.orgId));
      if (!vacancy) throw new NotFoundError('vacancy', 'VACANCY_NOT_FOUND');
      return { status: 200, body: { success: true, vacancy: fromView(vacancy) }, headers: etag(vacancy.version) };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/careers/vacancies/{vacancyId}',
    operationId: 'updateVacancy',
    summary: 'change the title, description or questions of a vacancy (`formFields` replaces the list; answers already received keep theirs); If-Match optional',
    tag,
    auth: 'bearer',
    permission: 'manage_members',
    params: vacancyParams,
    body: z.strictObject({ title: vacancyTitleSchema.optional(), description: vacancyDescriptionSchema.optional(), formFields: formFieldsSchema.optional() }),
    responses: { 200: { description: 'the vacancy as it is now (ETag: its version)', schema: vacancyReply }, ...writeErrors },
    async handler(input) {
      activeOrg(input.principal?.orgId);
      const result = await updateVacancy(input.services.eventStore, input.command, input.params.vacancyId, input.body, ifMatch(input));
      return written(input, input.params.vacancyId, result);
    },
  }),
  toggle(false),
  toggle(true),
  defineRoute({
    method: 'GET',
    path: '/public/careers/vacancies',
    operationId: 'listOpenVacancies',
    summary: "an organization's open vacancies, newest first, for applicants (no account): `orgId`, else CAREERS_ORG_ID",
    tag,
    auth: 'none',
    query: pageQuery.extend({ orgId: z.string().regex(idPattern).optional().meta({ description: 'the organization (default: CAREERS_ORG_ID)' }) }),
    responses: { 200: { description: 'a page of open vacancies', schema: pageReplySchema }, 404: { description: 'ORG_NOT_FOUND: no such organization' } },
    async handler({ query, services }) {
      const orgId = query.orgId ?? services.config.CAREERS_ORG_ID;
      if (!orgId) throw new ValidationError([{ field: 'query.orgId', message: 'required (no CAREERS_ORG_ID is configured)' }]);
      if (!(await orgExists(services.readStore, orgId))) throw new NotFoundError('organization', 'ORG_NOT_FOUND');
      const page = await listVacancies(services.readStore, { orgId, status: 'open' }, query.limit, query.cursor ?? null);
      return { status: 200, body: { success: true, items: page.items.map(fromView), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/public/careers/vacancies/{vacancyId}',
    operationId: 'getPublicVacancy',
    summary: 'one vacancy for applicants (no account), with its questions; a closed one says so (`status: closed`: applying answers 409)',
    tag,
    auth: 'none',
    params: vacancyParams,
    responses: { 200: { description: 'the vacancy', schema: vacancyReply }, 404: { description: 'VACANCY_NOT_FOUND' } },
    async handler({ params, services }) {
      const vacancy = await getVacancy(services.readStore, params.vacancyId);
      if (!vacancy || !(await orgExists(services.readStore, vacancy.orgId))) throw new NotFoundError('vacancy', 'VACANCY_NOT_FOUND');
      return { status: 200, body: { success: true, vacancy: fromView(vacancy) } };
    },
  }),
];
