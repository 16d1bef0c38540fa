import type { Consumer } from '../infra/ports/bus.js';
import type { Services } from '../infra/services.js';

/** The messaging webhooks context's reactions in the worker role. */
export function webhooksConsumers(_services: Services, _workerId: string): Consumer[] {
  return [];
}
