import { z } from 'zod';
import { redeploy, requestDeployment, withdrawDeployment } from '../../commands/apps-deploy.js';
import { loadVisibleApp } from '../../commands/apps.js';
import { appDeployStreamId, DEPLOYMENT_STATUSES, type Deployment } from '../../domain/apps/deploy-decide.js';
import { idSchema } from '../../domain/flows/index.js';
import { getDeployHead, listDeployments } from '../../projections/apps-deploy.js';
import { defineRoute, type RouteInput } from '../route.js';
import { appDeliveryTag as tag, appIdParams, publicBase, tenantOf } from './apps-preview.js';
import { pageQuery } from './pagination.js';

/** Deployments: 202 then QUEUED → BUILDING → READY | ERROR (or CANCELED), built by the app-deployer consumer. */
const deploymentSchema = z.object({
  deploymentId: z.string(),
  number: z.number(),
  versionId: z.string(),
  versionNumber: z.number(),
  flowId: z.string().nullable(),
  redeployOf: z.string().nullable(),
  status: z.enum(DEPLOYMENT_STATUSES),
  live: z.boolean().describe('the public URL serves this one'),
  requestedAt: z.string(),
  requestedBy: z.string().nullable(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  timings: z.object({ queuedMs: z.number().nullable(), buildMs: z.number().nullable(), totalMs: z.number().nullable() }),
  attempts: z.number(),
  files: z.number().nullable(),
  bytes: z.number().nullable(),
  log: z.array(z.string()),
  error: z.object({ code: z.string(), message: z.string(), problems: z.array(z.object({ file: z.string().nullable(), line: z.number().nullable(), column: z.number().nullable(), message: z.string() })) }).nullable(),
  servedFrom: z.string().nullable(),
  servedUntil: z.string().nullable(),
  withdrawnAt: z.string().nullable(),
});

const ms = (from: string | null, to: string | null) => (from && to ? Date.parse(to) - Date.parse(from) : null);

function view(d: Deployment, liveId: string | null) {
  return {
    deploymentId: d.deploymentId, number: d.number, versionId: d.versionId, versionNumber: d.versionNumber, flowId: d.flowId, redeployOf: d.redeployOf,
    status: d.status, live: d.deploymentId === liveId, requestedAt: d.requestedAt, requestedBy: d.requestedBy, startedAt: d.startedAt, finishedAt: d.finishedAt,
    timings: { queuedMs: ms(d.requestedAt, d.startedAt), buildMs: d.buildMs, totalMs: ms(d.requestedAt, d.finishedAt) },
    attempts: d.attempts, files: d.files, bytes: d.bytes, log: d.log, error: d.error, servedFrom: d.servedFrom, servedUntil: d.servedUntil, withdrawnAt: d.withdrawnAt,
  };
}

const accepted = z.object({ success: z.literal(true), deployment: deploymentSchema, statusUrl: z.string() });
type AnyInput = RouteInput<{ appId: string }, unknown, unknown>;

async function acceptedReply(input: AnyInput, started: { deploymentId: string; position: number | null; deployment: Deployment }) {
  await input.settle(started.position, appDeployStreamId(input.params.appId));
  return { status: 202, body: { success: true, deployment: view(started.deployment, null), statusUrl: `/api/apps/${input.params.appId}/deploy` }, headers: { Location: `/api/apps/${input.params.appId}/deploy` } };
}

export const appDeployRoutes = [
  defineRoute({
    method: 'POST',
    path: '/apps/{appId}/deploy',
    operationId: 'deployApp',
    summary: 'deploy a version of the app (the head by default: a version is taken for it) to its public URL; answers 202, then QUEUED → BUILDING → READY | ERROR. Rollback = deploy an earlier versionId',
    tag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appIdParams,
    body: z.strictObject({ versionId: idSchema.optional() }).optional(),
    responses: {
      202: { description: 'the deployment, QUEUED; follow it with GET /apps/{appId}/deploy', schema: accepted },
      404: { description: 'APP_NOT_FOUND, APP_VERSION_NOT_FOUND' },
      413: { description: 'APP_TOO_MANY_VERSIONS: deploying the head needs a new version and the app keeps no more' },
    },
    async handler(input) {
      const { services, principal, params, command, body } = input;
      const started = await requestDeployment({ eventStore: services.eventStore, newId: services.newId }, command, tenantOf(principal!), params.appId, body?.versionId);
      return acceptedReply(input as AnyInput, started);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/apps/{appId}/redeploy',
    operationId: 'redeployApp',
    summary: 'rebuild the version the public URL serves, as a new deployment (202)',
    tag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appIdParams,
    responses: {
      202: { description: 'the new deployment, QUEUED', schema: accepted },
      404: { description: 'APP_NOT_FOUND' },
      409: { description: 'NOTHING_TO_REDEPLOY: no deployment is live' },
    },
    async handler(input) {
      const { services, principal, params, command } = input;
      const started = await redeploy({ eventStore: services.eventStore, newId: services.newId }, command, tenantOf(principal!), params.appId);
      return acceptedReply(input as AnyInput, started);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/apps/{appId}/deploy',
    operationId: 'getAppDeployment',
    summary: 'deployment status: the public URL, the version served, the latest deployment with its build log and timings, and the history (newest first, paginated; dates as they happened)',
    tag,
    auth: 'bearer',
    permission: 'view_resources',
    params: appIdParams,
    query: pageQuery,
    responses: {
      200: {
        description: 'status and history',
        schema: z.object({
          success: z.literal(true),
          appId: z.string(),
          status: z.enum([...DEPLOYMENT_STATUSES, 'NONE']).describe("the latest deployment's status, NONE before the first"),
          url: z.string().nullable().describe('the public URL while a deployment is live'),
          live: deploymentSchema.nullable(),
          latest: deploymentSchema.nullable(),
          history: z.array(deploymentSchema),
          nextCursor: z.string().nullable(),
        }),
      },
      404: { description: 'APP_NOT_FOUND' },
    },
    async handler(input) {
      const { services, principal, params, query } = input;
      await loadVisibleApp(services.eventStore, params.appId, tenantOf(principal!));
      const head = await getDeployHead(services.readStore, params.appId);
      const liveId = head?.liveId ?? null;
      const latest = head?.deployments[head.deployments.length - 1] ?? null;
      const live = head && liveId ? (head.deployments.find((d) => d.deploymentId === liveId) ?? null) : null;
      const page = await listDeployments(services.readStore, params.appId, query.limit, query.cursor ?? null);
      return {
        status: 200,
        body: {
          success: true,
          appId: params.appId,
          status: latest?.status ?? 'NONE',
          url: live ? `${publicBase(services, input.koa)}/a/${params.appId}/` : null,
          live: live ? view(live, liveId) : null,
          latest: latest ? view(latest, liveId) : null,
          history: page.items.map((d) => view(d, liveId)),
          nextCursor: page.nextCursor,
        },
      };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/apps/{appId}/deploy',
    operationId: 'withdrawAppDeployment',
    summary: 'withdraw the deployment: the public URL answers 404 from the next request on; queued or building deployments are canceled',
    tag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appIdParams,
    responses: {
      200: { description: 'withdrawn', schema: z.object({ success: z.literal(true), withdrawn: z.string().nullable(), canceled: z.array(z.string()) }) },
      404: { description: 'APP_NOT_FOUND, APP_NOT_DEPLOYED (nothing live, queued or building)' },
    },
    async handler(input) {
      const { services, principal, params, command } = input;
      const result = await withdrawDeployment(services.eventStore, command, tenantOf(principal!), params.appId);
      await input.settle(result.position, appDeployStreamId(params.appId));
      const withdrawn = result.events.find((e) => e.type === 'DeploymentWithdrawn');
      const canceled = result.events.filter((e) => e.type === 'DeploymentCanceled').map((e) => (e.data as { deploymentId: string }).deploymentId);
      return { status: 200, body: { success: true, withdrawn: withdrawn ? (withdrawn.data as { deploymentId: string }).deploymentId : null, canceled } };
    },
  }),
];
