import type { BuildProblemData, DeployEvent, DeploymentStatus } from './deploy-events.js';

export interface Deployment {
  deploymentId: string;
  /** 1, 2, 3… in the order requested. */
  number: number;
  versionId: string;
  versionNumber: number;
  flowId: string | null;
  /** The deployment this one rebuilds (POST …/redeploy), else null. */
  redeployOf: string | null;
  status: DeploymentStatus;
  requestedAt: string;
  requestedBy: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  attempts: number;
  buildMs: number | null;
  files: number | null;
  bytes: number | null;
  log: string[];
  error: { code: string; message: string; problems: BuildProblemData[] } | null;
  /** When the public URL started serving it, and when it stopped (replaced by a newer one, or withdrawn). */
  servedFrom: string | null;
  servedUntil: string | null;
  withdrawnAt: string | null;
}

export interface DeployState {
  appId: string;
  deployments: Deployment[];
  /** The deployment the public URL serves, or null (none READY, or withdrawn). */
  liveId: string | null;
  version: number;
}

export const initialDeployState: DeployState = { appId: '', deployments: [], liveId: null, version: -1 };

const update = (state: DeployState, id: string, change: (d: Deployment) => Deployment): Deployment[] =>
  state.deployments.map((d) => (d.deploymentId === id ? change(d) : d));

export function evolveDeploy(state: DeployState, event: DeployEvent): DeployState {
  const version = state.version + 1;
  switch (event.type) {
    case 'DeploymentRequested': {
      const d = event.data;
      const deployment: Deployment = {
        deploymentId: d.deploymentId, number: state.deployments.length + 1, versionId: d.versionId, versionNumber: d.versionNumber, flowId: d.flowId,
        redeployOf: d.redeployOf, status: 'QUEUED', requestedAt: d.at, requestedBy: d.by, startedAt: null, finishedAt: null, attempts: 0,
        buildMs: null, files: null, bytes: null, log: [], error: null, servedFrom: null, servedUntil: null, withdrawnAt: null,
      };
      return { ...state, appId: d.appId, deployments: [...state.deployments, deployment], version };
    }
    case 'DeploymentBuildStarted': {
      const d = event.data;
      return {
        ...state,
        deployments: update(state, d.deploymentId, (x) => ({ ...x, status: 'BUILDING', startedAt: x.startedAt ?? d.at, attempts: d.attempt })),
        version,
      };
    }
    case 'DeploymentSucceeded': {
      const d = event.data;
      // A newer deployment already live stays live: an older build finishing late never replaces it.
      const live = state.deployments.find((x) => x.deploymentId === state.liveId);
      const mine = state.deployments.find((x) => x.deploymentId === d.deploymentId);
      const takesOver = !live || (mine !== undefined && mine.number > live.number);
      let deployments = update(state, d.deploymentId, (x) => ({
        ...x, status: 'READY', finishedAt: d.at, buildMs: d.buildMs, files: d.files, bytes: d.bytes, log: d.log, servedFrom: takesOver ? d.at : null,
      }));
      if (takesOver && live) deployments = deployments.map((x) => (x.deploymentId === live.deploymentId ? { ...x, servedUntil: d.at } : x));
      return { ...state, deployments, liveId: takesOver ? d.deploymentId : state.liveId, version };
    }
    case 'DeploymentFailed': {
      const d = event.data;
      return {
        ...state,
        deployments: update(state, d.deploymentId, (x) => ({
          ...x, status: 'ERROR', finishedAt: d.at, buildMs: d.buildMs, log: d.log, error: { code: d.code, message: d.message, problems: d.problems },
        })),
        version,
      };
    }
    case 'DeploymentCanceled':
      return { ...state, deployments: update(state, event.data.deploymentId, (x) => ({ ...x, status: 'CANCELED', finishedAt: event.data.at })), version };
    case 'DeploymentWithdrawn':
      return {
        ...state,
        deployments: update(state, event.data.deploymentId, (x) => ({ ...x, withdrawnAt: event.data.at, servedUntil: x.servedUntil ?? event.data.at })),
        liveId: state.liveId === event.data.deploymentId ? null : state.liveId,
        version,
      };
    default:
      return state;
  }
}

export const findDeployment = (state: DeployState, deploymentId: string) => state.deployments.find((d) => d.deploymentId === deploymentId);
export const liveDeployment = (state: DeployState) => (state.liveId ? findDeployment(state, state.liveId) : undefined);
export const pendingDeployments = (state: DeployState) => state.deployments.filter((d) => d.status === 'QUEUED' || d.status === 'BUILDING');
