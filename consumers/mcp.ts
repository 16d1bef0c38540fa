import { MCP_CATEGORY } from '../domain/mcp/index.js';
import type { Consumer } from '../infra/ports/bus.js';
import type { Services } from '../infra/ports/services.js';
import { McpReconnector } from './mcp-reconnect.js';
import { McpWorker } from './mcp-worker.js';

/**
 * The MCP context's reactions in the worker role: one consumer of the `mcpserver` category that
 * serves connection requests and calls (mcp-worker.ts) and schedules automatic reconnects
 * (mcp-reconnect.ts, which also scans for due reconnects on its own timer).
 */
export function mcpConsumers(services: Services, _workerId: string): Consumer[] {
  const reconnector = new McpReconnector(services);
  const worker = new McpWorker(services, (serverId, at) => reconnector.due(serverId, at));
  reconnector.start();
  return [{ name: 'mcp-connections', categories: [MCP_CATEGORY], handle: (event) => worker.handle(event) }];
}
