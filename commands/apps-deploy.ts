import { randomUUID } from 'node:crypto';
import { appVersionSnapshot, manifestOf, type AppState, type AppTenant } from '../domain/apps/state.js';
import type { AppContract } from '../domain/apps/events.js';
import { appVersionNotFound } from '../domain/apps/decide.js';
import { appDeployStreamId, deployDecider, findDeployment, liveDeployment, type Deployment } from '../domain/apps/deploy-decide.js';
import { flowDecider, flowStreamId } from '../domain/flows/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { AppDelivery } from '../ports/app-delivery.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import { executeAppCommand, loadApp, loadVisibleApp } from './apps.js';
import { buildOnce } from './apps-preview.js';
import { handleAtContextTime, loadState, type CommandContext } from './handle.js';

/**
 * Deployments (`appdeploy-<appId>`): POST …/deploy records DeploymentRequested (QUEUED); the
 * `app-deployer` consumer builds it (BUILDING → READY | ERROR); the public URL serves the live one.
 * A deployment names an app version: the one asked for, or the head (a version is taken for it,
 * unless the newest version already is exactly the head), so what is served is always a snapshot.
 */
export interface DeployPorts {
  eventStore: EventStore;
  newId(): string;
}

export interface DeployWorkerPorts {
  eventStore: EventStore;
  appDelivery: AppDelivery;
  clock: { now(): Date };
  logger: Logger;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The newest version when it is exactly the head; else a new version of the head, labelled for the deploy. */
async function versionOfHead(ports: DeployPorts, context: CommandContext, tenant: AppTenant, app: AppState): Promise<string> {
  const newest = app.versions[app.versions.length - 1];
  if (newest && sameJson(newest.files, manifestOf(app.files)) && sameJson(newest.contract, app.contract) && newest.flowId === app.flowId) return newest.versionId;
  const flowVersion = app.flowId ? (await loadState(ports.eventStore, flowStreamId(app.flowId), flowDecider)).state.version : null;
  const versionId = ports.newId();
  await executeAppCommand(ports.eventStore, context, {
    type: 'CreateAppVersion', appId: app.appId, tenant, by: context.actorId, versionId, label: `deploy ${context.now.toISOString()}`, flowVersion: flowVersion ?? null,
  });
  return versionId;
}

export async function requestDeployment(ports: DeployPorts, context: CommandContext, tenant: AppTenant, appId: string, versionId: string | undefined) {
  const app = await loadVisibleApp(ports.eventStore, appId, tenant);
  const chosen = versionId ?? (await versionOfHead(ports, context, tenant, app));
  const current = versionId ? app : (await loadApp(ports.eventStore, appId)).state;
  const snapshot = appVersionSnapshot(current, chosen);
  if (!snapshot) throw appVersionNotFound(chosen);
  const deploymentId = ports.newId();
  const result = await handleAtContextTime(ports.eventStore, context, appDeployStreamId(appId), deployDecider, {
    type: 'RequestDeployment', appId, deploymentId, versionId: snapshot.versionId, versionNumber: snapshot.number, flowId: snapshot.flowId, redeployOf: null, by: context.actorId,
  });
  return { deploymentId, position: result.position, deployment: findDeployment(result.state, deploymentId)! };
}

/** Rebuilds the version the public URL serves, as a new deployment. */
export async function redeploy(ports: DeployPorts, context: CommandContext, tenant: AppTenant, appId: string) {
  await loadVisibleApp(ports.eventStore, appId, tenant);
  const { state } = await loadState(ports.eventStore, appDeployStreamId(appId), deployDecider);
  const live = liveDeployment(state);
  if (!live) throw new DomainError('NOTHING_TO_REDEPLOY', 'the app has no live deployment to rebuild; deploy it first', 'conflict');
  const deploymentId = ports.newId();
  const result = await handleAtContextTime(ports.eventStore, context, appDeployStreamId(appId), deployDecider, {
    type: 'RequestDeployment', appId, deploymentId, versionId: live.versionId, versionNumber: live.versionNumber, flowId: live.flowId, redeployOf: live.deploymentId, by: context.actorId,
  });
  return { deploymentId, position: result.position, deployment: findDeployment(result.state, deploymentId)! };
}

/** DELETE …/deploy: the public URL answers 404 from the next request on; queued or running builds are canceled. */
export async function withdrawDeployment(store: EventStore, context: CommandContext, tenant: AppTenant, appId: string) {
  await loadVisibleApp(store, appId, tenant);
  return handleAtContextTime(store, context, appDeployStreamId(appId), deployDecider, { type: 'WithdrawDeployment', by: context.actorId });
}

/** The deployment the public URL serves now (folded from the stream, so a withdraw is seen at once) with its version's contract, or null. */
export async function liveDeploymentOf(store: EventStore, appId: string): Promise<{ deployment: Deployment; contract: AppContract } | null> {
  const { state } = await loadState(store, appDeployStreamId(appId), deployDecider);
  const live = liveDeployment(state);
  if (!live) return null;
  const app = (await loadApp(store, appId)).state;
  const version = app.versions.find((v) => v.versionId === live.versionId);
  return app.exists && !app.deleted && version ? { deployment: live, contract: version.contract } : null;
}

/** The key of a deployment's built site in `AppDelivery.sites`. */
export const siteKey = (deploymentId: string) => `deploy:${deploymentId}`;

/** A READY deployment's built site: from this process's cache, else rebuilt from its version (deterministic). */
export async function deployedSite(store: EventStore, delivery: AppDelivery, appId: string, deployment: Deployment) {
  const result = await buildOnce(delivery, siteKey(deployment.deploymentId), async () => {
    const { state } = await loadApp(store, appId);
    const snapshot = appVersionSnapshot(state, deployment.versionId);
    if (!snapshot) throw appVersionNotFound(deployment.versionId);
    return { files: snapshot.files, contract: snapshot.contract };
  });
  return { result };
}

/**
 * The consumer's work for one DeploymentRequested. Idempotent and resumable: a deployment already
 * finished is left alone; one left BUILDING by a worker that stopped is built again (attempt n+1),
 * and failed as DEPLOYMENT_ABANDONED after MAX_BUILD_ATTEMPTS.
 */
export async function runDeployment(ports: DeployWorkerPorts, event: RecordedEvent, workerId: string): Promise<void> {
  const { appId, deploymentId, versionId } = event.data as { appId: string; deploymentId: string; versionId: string };
  const streamId = appDeployStreamId(appId);
  const context = (): CommandContext => ({
    actorId: null, orgId: event.metadata.orgId, workspaceId: event.metadata.workspaceId, correlationId: event.metadata.correlationId,
    causationId: event.id, requestId: randomUUID(), now: ports.clock.now(),
  });
  const started = await handleAtContextTime(ports.eventStore, context(), streamId, deployDecider, { type: 'StartDeploymentBuild', deploymentId, worker: workerId });
  const deployment = findDeployment(started.state, deploymentId);
  if (!deployment || deployment.status !== 'BUILDING' || started.events.length === 0) return;
  const attempt = deployment.attempts;
  const t0 = performance.now();
  const log = [`attempt ${attempt} on ${workerId}: building version ${deployment.versionNumber} (${versionId})`];
  let outcome;
  try {
    const { state } = await loadApp(ports.eventStore, appId);
    const snapshot = state.exists && !state.deleted ? appVersionSnapshot(state, versionId) : undefined;
    if (!snapshot) {
      await handleAtContextTime(ports.eventStore, context(), streamId, deployDecider, {
        type: 'FailDeployment', deploymentId, code: state.deleted ? 'APP_DELETED' : 'APP_VERSION_NOT_FOUND', message: state.deleted ? 'the app was deleted' : `version ${versionId} not found`,
        problems: [], buildMs: Math.round(performance.now() - t0), log,
      });
      return;
    }
    ports.appDelivery.sites.delete(siteKey(deploymentId));
    outcome = await buildOnce(ports.appDelivery, siteKey(deploymentId), async () => ({ files: snapshot.files, contract: snapshot.contract }));
  } catch (err) {
    ports.logger.error({ err, appId, deploymentId }, 'app build crashed');
    await handleAtContextTime(ports.eventStore, context(), streamId, deployDecider, {
      type: 'FailDeployment', deploymentId, code: 'APP_BUILD_CRASHED', message: (err as Error).message, problems: [], buildMs: Math.round(performance.now() - t0), log,
    });
    return;
  }
  const buildMs = Math.round(performance.now() - t0);
  if ('log' in outcome) log.push(...outcome.log);
  if (outcome.ok) {
    await handleAtContextTime(ports.eventStore, context(), streamId, deployDecider, {
      type: 'CompleteDeployment', deploymentId, files: outcome.site.files.size, bytes: outcome.site.bytes, buildMs, entries: 'entries' in outcome ? (outcome.entries as string[]) : [], log,
    });
  } else {
    await handleAtContextTime(ports.eventStore, context(), streamId, deployDecider, {
      type: 'FailDeployment', deploymentId, code: outcome.code, message: outcome.message, problems: outcome.problems, buildMs, log,
    });
  }
}
