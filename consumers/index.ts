import type { Consumer } from '../ports/bus.js';
import type { Services } from '../ports/services.js';
import { probeAcknowledger } from './probes.js';
import { runWorker } from './runs.js';
import { workflowWorker } from './workflows.js';
import { mcpConsumers } from './mcp.js';
import { messagingConsumers } from './messaging.js';
import { webhooksConsumers } from './messaging-webhooks.js';
import { appDeployer } from './apps-deploy.js';
import { integrationPublisher } from './integration.js';

/** Every reaction the worker role runs. */
export function allConsumers(services: Services, workerId: string): Consumer[] {
  return [probeAcknowledger(services.eventStore, workerId, services.now), runWorker({ eventStore: services.eventStore, clock: { now: services.now }, logger: services.logger, runs: services.runs, maxRuns: services.config.WORKER_MAX_RUNS }, workerId), workflowWorker(workflowEnginePorts(services), workerId), ...mcpConsumers(services, workerId), ...messagingConsumers({ eventStore: services.eventStore, clock: { now: services.now } }, workerId), ...webhooksConsumers({ eventStore: services.eventStore, clock: { now: services.now }, webhooks: services.webhooks }, workerId), appDeployer({ eventStore: services.eventStore, appDelivery: services.appDelivery, clock: { now: services.now }, logger: services.logger }, workerId), ...(services.integration ? [integrationPublisher({ eventStore: services.eventStore, publisher: services.integration })] : [])];
}

/** The run engine's ports (as the container builds them for runs) plus the workflow timers. */
function workflowEnginePorts(services: Services) {
  const { eventStore, logger, llm, outbound, memory, projections, metrics, mcp, config } = services;
  return {
    eventStore, logger, llm, outbound, memory, projections, metrics, settings: config, secrets: services.sealedBox,
    clock: { now: () => services.now() }, newId: () => services.newId(),
    mcp: { eventStore, config, mcp, now: () => services.now() },
    timers: services.workflowTimers,
    localWorkerId: services.runs.localWorkerId,
  };
}
