import { z } from 'zod';
import { createProbe, incrementProbe } from '../../commands/probes.js';
import { probeNameSchema, probeStreamId } from '../../domain/probes/index.js';
import type { ReadStore } from '../../ports/read-store.js';
import { getProbe, listProbes, type ProbeView } from '../../projections/probes.js';
import { NotFoundError } from '../errors.js';
import { defineRoute, type RouteReply } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';

const probeSchema = z.object({
  id: z.string(),
  name: z.string(),
  value: z.number(),
  version: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
  acknowledgedBy: z.string().nullable(),
});
const probeIdParams = z.strictObject({ probeId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });

const view = ({ _id, ...rest }: ProbeView) => ({ id: _id, ...rest });

/** The probe with its version as ETag: what a client sends back as If-Match. */
async function probeReply(store: ReadStore, probeId: string): Promise<RouteReply> {
  const probe = await getProbe(store, probeId);
  if (!probe) throw new NotFoundError('probe', 'PROBE_NOT_FOUND');
  return { status: 200, body: { success: true, probe: view(probe) }, headers: { ETag: `"${probe.version}"` } };
}

/** Diagnostics: a tiny aggregate that proves the write and read paths of a deployment. */
export const probeRoutes = [
  defineRoute({
    method: 'POST',
    path: '/probes',
    operationId: 'createProbe',
    summary: 'create a probe (diagnostic aggregate: command, reservation, projection, read-your-writes)',
    tag: 'Diagnostics',
    auth: 'none',
    body: z.strictObject({ name: probeNameSchema }),
    responses: { 201: { description: 'created', schema: z.object({ success: z.literal(true), probe: probeSchema }) }, 409: { description: 'name taken' } },
    async handler({ body, services, command, settle }) {
      const probeId = services.newId();
      const result = await createProbe(services.eventStore, command, probeId, body.name);
      await settle(result.position, probeStreamId(probeId));
      const probe = await getProbe(services.readStore, probeId);
      return { status: 201, body: { success: true, probe: probe ? view(probe) : null } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/probes/{probeId}/increment',
    operationId: 'incrementProbe',
    summary: 'add to a probe\'s value (If-Match: the version you saw)',
    tag: 'Diagnostics',
    auth: 'none',
    params: probeIdParams,
    body: z.strictObject({ by: z.number().int().min(-1_000_000).max(1_000_000) }),
    responses: { 200: { description: 'updated', schema: z.object({ success: z.literal(true), probe: probeSchema }) }, 404: { description: 'no such probe' }, 412: { description: 'version moved on' } },
    async handler({ params, body, services, command, settle, koa }) {
      const ifMatch = koa.get('if-match').replace(/"/g, '');
      const expected = ifMatch && /^\d+$/.test(ifMatch) ? Number(ifMatch) : undefined;
      const result = await incrementProbe(services.eventStore, command, params.probeId, body.by, expected);
      await settle(result.position, probeStreamId(params.probeId));
      return probeReply(services.readStore, params.probeId);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/probes/{probeId}',
    operationId: 'getProbe',
    summary: 'get a probe',
    tag: 'Diagnostics',
    auth: 'none',
    params: probeIdParams,
    responses: { 200: { description: 'the probe', schema: z.object({ success: z.literal(true), probe: probeSchema }) }, 404: { description: 'no such probe' } },
    async handler({ params, services }) {
      return probeReply(services.readStore, params.probeId);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/probes',
    operationId: 'listProbes',
    summary: 'list probes, most recently updated first',
    tag: 'Diagnostics',
    auth: 'none',
    query: pageQuery,
    responses: {
      200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(probeSchema), nextCursor: z.string().nullable() }) },
    },
    async handler({ query, services }) {
      return pageReply(await listProbes(services.readStore, query.limit, query.cursor ?? null), view);
    },
  }),
];
