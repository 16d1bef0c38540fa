import type { Consumer } from '../infra/ports/bus.js';
import type { Services } from '../infra/services.js';

/** The MCP context's reactions in the worker role. */
export function mcpConsumers(_services: Services, _workerId: string): Consumer[] {
  return [];
}
