import { MCP_CATEGORY } from '../domain/mcp/index.js';
import type { Consumer } from '../ports/bus.js';
import { McpReconnector, type McpReconnectPorts } from './mcp-reconnect.js';
import { McpWorker, type McpWorkerPorts } from './mcp-worker.js';

/** What the MCP consumers use between them (the Services bag provides it). */
export type McpConsumerPorts = McpWorkerPorts & McpReconnectPorts;

/**
 * The MCP context's reactions in the worker role: one consumer of the `mcpserver` category that
 * serves connection requests and calls (mcp-worker.ts) and schedules automatic reconnects
 * (mcp-reconnect.ts, which also scans for due reconnects on its own timer).
 */
export function mcpConsumers(ports: McpConsumerPorts, _workerId: string): Consumer[] {
  const reconnector = new McpReconnector(ports);
  const worker = new McpWorker(ports, (serverId, at) => reconnector.due(serverId, at));
  reconnector.start();
  return [{ name: 'mcp-connections', categories: [MCP_CATEGORY], handle: (event) => worker.handle(event) }];
}
