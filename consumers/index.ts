import type { Consumer } from '../infra/ports/bus.js';
import type { Services } from '../infra/ports/services.js';
import { probeAcknowledger } from './probes.js';
import { runWorker } from './runs.js';
import { mcpConsumers } from './mcp.js';
import { messagingConsumers } from './messaging.js';
import { webhooksConsumers } from './messaging-webhooks.js';

/** Every reaction the worker role runs. */
export function allConsumers(services: Services, workerId: string): Consumer[] {
  return [probeAcknowledger(services.eventStore, workerId, services.now), runWorker({ eventStore: services.eventStore, clock: { now: services.now }, logger: services.logger, runs: services.runs }, workerId), ...mcpConsumers(services, workerId), ...messagingConsumers({ eventStore: services.eventStore, clock: { now: services.now } }, workerId), ...webhooksConsumers({ eventStore: services.eventStore, clock: { now: services.now }, webhooks: services.webhooks }, workerId)];
}
