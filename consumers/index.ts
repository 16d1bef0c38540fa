import type { Consumer } from '../infra/ports/bus.js';
import type { Services } from '../infra/ports/services.js';
import { probeAcknowledger } from './probes.js';
import { runWorker } from './runs.js';
import { mcpConsumers } from './mcp.js';
import { messagingConsumers } from './messaging.js';
import { webhooksConsumers } from './messaging-webhooks.js';

/** Every reaction the worker role runs. */
export function allConsumers(services: Services, workerId: string): Consumer[] {
  return [probeAcknowledger(services.eventStore, workerId, services.now), runWorker(services, workerId), ...mcpConsumers(services, workerId), ...messagingConsumers(services, workerId), ...webhooksConsumers(services, workerId)];
}
