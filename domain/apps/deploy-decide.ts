import { decider, decideByType, DomainError, type Decider } from '../shared/decider.js';
import { deployEventSchemas, type BuildProblemData, type DeployEvent } from './deploy-events.js';
import { evolveDeploy, findDeployment, initialDeployState, liveDeployment, pendingDeployments, type DeployState } from './deploy-state.js';

export * from './deploy-events.js';
export * from './deploy-state.js';

/** A build taken up this many times without finishing (each time a worker died in it) is failed. */
export const MAX_BUILD_ATTEMPTS = 3;
export const MAX_LOG_LINES = 200;
export const MAX_LOG_LINE = 2_000;

export type DeployCommand =
  | { type: 'RequestDeployment'; appId: string; deploymentId: string; versionId: string; versionNumber: number; flowId: string | null; redeployOf: string | null; by: string | null; at: string }
  | { type: 'StartDeploymentBuild'; deploymentId: string; worker: string; at: string }
  | { type: 'CompleteDeployment'; deploymentId: string; files: number; bytes: number; buildMs: number; entries: string[]; log: string[]; at: string }
  | { type: 'FailDeployment'; deploymentId: string; code: string; message: string; problems: BuildProblemData[]; buildMs: number | null; log: string[]; at: string }
  /** DELETE …/deploy: cancels what is queued or building and withdraws what the public URL serves. */
  | { type: 'WithdrawDeployment'; by: string | null; at: string };

export const deploymentNotFound = (deploymentId: string) => new DomainError('DEPLOYMENT_NOT_FOUND', `deployment ${deploymentId} not found`, 'not_found', { deploymentId });

/** Keeps a build log within what an event may carry: at most 200 lines of 2,000 characters (the first and last lines kept). */
export function boundedLog(lines: string[]): string[] {
  const cut = lines.map((l) => (l.length > MAX_LOG_LINE ? `${l.slice(0, MAX_LOG_LINE - 1)}…` : l));
  if (cut.length <= MAX_LOG_LINES) return cut;
  const half = MAX_LOG_LINES / 2;
  return [...cut.slice(0, half - 1), `… ${cut.length - MAX_LOG_LINES + 1} lines left out …`, ...cut.slice(-half)];
}

export const decideDeploy = decideByType<DeployCommand, DeployState, DeployEvent>({
  RequestDeployment(c, state) {
    if (findDeployment(state, c.deploymentId)) return [];
    const { type: _type, ...data } = c;
    return [{ type: 'DeploymentRequested', data }];
  },
  StartDeploymentBuild(c, state) {
    const d = findDeployment(state, c.deploymentId);
    if (!d) throw deploymentNotFound(c.deploymentId);
    if (d.status !== 'QUEUED' && d.status !== 'BUILDING') return [];
    if (d.attempts >= MAX_BUILD_ATTEMPTS) {
      return [{
        type: 'DeploymentFailed',
        data: {
          deploymentId: d.deploymentId, code: 'DEPLOYMENT_ABANDONED', message: `the build was started ${d.attempts} times and never finished (the worker stopped during it)`,
          problems: [], buildMs: null, log: boundedLog([...d.log, `abandoned after ${d.attempts} attempts`]), at: c.at,
        },
      }];
    }
    return [{ type: 'DeploymentBuildStarted', data: { deploymentId: d.deploymentId, attempt: d.attempts + 1, worker: c.worker, at: c.at } }];
  },
  CompleteDeployment(c, state) {
    const d = findDeployment(state, c.deploymentId);
    if (!d) throw deploymentNotFound(c.deploymentId);
    if (d.status !== 'BUILDING') return []; // canceled meanwhile, or already recorded
    return [{ type: 'DeploymentSucceeded', data: { deploymentId: d.deploymentId, files: c.files, bytes: c.bytes, buildMs: c.buildMs, entries: c.entries, log: boundedLog(c.log), at: c.at } }];
  },
  FailDeployment(c, state) {
    const d = findDeployment(state, c.deploymentId);
    if (!d) throw deploymentNotFound(c.deploymentId);
    if (d.status !== 'BUILDING' && d.status !== 'QUEUED') return [];
    return [{
      type: 'DeploymentFailed',
      data: { deploymentId: d.deploymentId, code: c.code, message: c.message.slice(0, MAX_LOG_LINE), problems: c.problems.slice(0, 50).map((p) => ({ ...p, file: p.file?.slice(0, 500) ?? null, message: p.message.slice(0, MAX_LOG_LINE) })), buildMs: c.buildMs, log: boundedLog(c.log), at: c.at },
    }];
  },
  WithdrawDeployment(c, state) {
    const events: DeployEvent[] = pendingDeployments(state).map((d) => ({ type: 'DeploymentCanceled', data: { deploymentId: d.deploymentId, by: c.by, at: c.at } }));
    const live = liveDeployment(state);
    if (live) events.push({ type: 'DeploymentWithdrawn', data: { deploymentId: live.deploymentId, by: c.by, at: c.at } });
    if (events.length === 0) throw new DomainError('APP_NOT_DEPLOYED', 'the app has no deployment to withdraw', 'not_found');
    return events;
  },
});

export const deployDecider: Decider<DeployCommand, DeployState, DeployEvent> = decider(initialDeployState, evolveDeploy, decideDeploy, deployEventSchemas);
