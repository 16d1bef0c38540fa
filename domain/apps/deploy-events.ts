import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/**
 * Deployments of an app (`appdeploy-<appId>`, one stream per app, beside E1's `app-<appId>`): every
 * deployment ever requested, in order, with its dates as they happened (never rewritten), and which
 * one the public URL serves.
 */
export const DEPLOYMENT_STATUSES = ['QUEUED', 'BUILDING', 'READY', 'ERROR', 'CANCELED'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

export const buildProblemSchema = z.object({ file: z.string().nullable(), line: z.number().int().nullable(), column: z.number().int().nullable(), message: z.string() });
export type BuildProblemData = z.infer<typeof buildProblemSchema>;

const by = z.string().nullable();
const logSchema = z.array(z.string().max(2_000)).max(200);

export const deployEventSchemas = {
  DeploymentRequested: z.object({
    appId: z.string(), deploymentId: z.string(), versionId: z.string(), versionNumber: z.number().int().positive(),
    flowId: z.string().nullable(), redeployOf: z.string().nullable(), by, at: z.string(),
  }),
  /** A worker took the build; `attempt` > 1 when a build left BUILDING (a crash) was taken up again. */
  DeploymentBuildStarted: z.object({ deploymentId: z.string(), attempt: z.number().int().positive(), worker: z.string(), at: z.string() }),
  DeploymentSucceeded: z.object({
    deploymentId: z.string(), files: z.number().int().nonnegative(), bytes: z.number().int().nonnegative(), buildMs: z.number().int().nonnegative(),
    entries: z.array(z.string()), log: logSchema, at: z.string(),
  }),
  DeploymentFailed: z.object({
    deploymentId: z.string(), code: z.string(), message: z.string(), problems: z.array(buildProblemSchema).max(50),
    buildMs: z.number().int().nonnegative().nullable(), log: logSchema, at: z.string(),
  }),
  DeploymentCanceled: z.object({ deploymentId: z.string(), by, at: z.string() }),
  /** The public URL stops serving this deployment (DELETE …/deploy). */
  DeploymentWithdrawn: z.object({ deploymentId: z.string(), by, at: z.string() }),
};

export type DeployEvent = EventsOf<typeof deployEventSchemas>;

export const appDeployStreamId = (appId: string) => `appdeploy-${appId}`;
export const APP_DEPLOY_CATEGORY = 'appdeploy';
