import { evolveDeploy, initialDeployState, APP_DEPLOY_CATEGORY, type DeployEvent, type DeployState, type Deployment } from '../domain/apps/deploy-decide.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

/**
 * Deployments read model: `app_deploy_heads` (one per app: its folded deploy state, guarded by the
 * stream revision so a redelivered event changes nothing) and `app_deployments` (one per deployment,
 * for the paginated history, newest first). Dates are copied from the events, never recomputed.
 */
export interface DeployHeadDoc extends Doc {
  state: DeployState;
  version: number;
}

export interface DeploymentDoc extends Doc, Deployment {
  appId: string;
  live: boolean;
}

const HEADS = 'app_deploy_heads';
const DEPLOYMENTS = 'app_deployments';

export const appDeployProjector: Projector = {
  name: 'app-deployments',
  categories: [APP_DEPLOY_CATEGORY],
  ...ownedCollections({ [HEADS]: [], [DEPLOYMENTS]: [{ keys: { appId: 1, number: -1 } }] }),
  async project(recorded, store) {
    const appId = recorded.streamId.slice(APP_DEPLOY_CATEGORY.length + 1);
    const heads = store.collection<DeployHeadDoc>(HEADS);
    const head = await heads.findOne({ _id: appId });
    if (head && head.version >= recorded.revision) return;
    const before = head?.state ?? initialDeployState;
    const after = evolveDeploy(before, recorded as RecordedEvent & DeployEvent);
    if (after === before) return;
    // Only the deployments this event touched (its own, and the one it took the public URL from).
    const touched = new Set<string>();
    const data = recorded.data as { deploymentId?: string };
    if (data.deploymentId) touched.add(data.deploymentId);
    if (before.liveId) touched.add(before.liveId);
    if (after.liveId) touched.add(after.liveId);
    const deployments = store.collection<DeploymentDoc>(DEPLOYMENTS);
    for (const d of after.deployments) {
      if (!touched.has(d.deploymentId)) continue;
      await deployments.replaceOne({ _id: d.deploymentId }, { _id: d.deploymentId, appId, ...d, live: after.liveId === d.deploymentId }, { upsert: true });
    }
    await heads.replaceOne({ _id: appId }, { _id: appId, state: { ...after, version: recorded.revision }, version: recorded.revision }, { upsert: true });
  },
};

export async function getDeployHead(store: ReadStore, appId: string): Promise<DeployState | null> {
  return (await store.collection<DeployHeadDoc>(HEADS).findOne({ _id: appId }))?.state ?? null;
}

export function listDeployments(store: ReadStore, appId: string, limit: number, cursor: string | null) {
  return store.collection<DeploymentDoc>(DEPLOYMENTS).page({ appId }, { sort: { number: -1 }, limit, cursor });
}
