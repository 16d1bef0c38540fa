import type { Consumer } from '../infra/ports/bus.js';
import type { Services } from '../infra/services.js';

/** The messaging context's reactions in the worker role. */
export function messagingConsumers(_services: Services, _workerId: string): Consumer[] {
  return [];
}
