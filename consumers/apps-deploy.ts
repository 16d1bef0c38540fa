import { runDeployment, type DeployWorkerPorts } from '../commands/apps-deploy.js';
import { APP_DEPLOY_CATEGORY } from '../domain/apps/deploy-decide.js';
import type { Consumer } from '../ports/bus.js';

/**
 * Builds requested deployments (DeploymentRequested → BUILDING → READY | ERROR). At least once: the
 * bus redelivers a DeploymentRequested whose handling did not finish (a crash mid-build), and
 * runDeployment resumes it (or fails it after MAX_BUILD_ATTEMPTS); a finished one is left alone.
 */
export function appDeployer(ports: DeployWorkerPorts, workerId: string): Consumer {
  return {
    name: 'app-deployer',
    categories: [APP_DEPLOY_CATEGORY],
    async handle(event) {
      if (event.type !== 'DeploymentRequested') return;
      await runDeployment(ports, event, workerId);
    },
  };
}
