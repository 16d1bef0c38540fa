import { decider, type Decider } from '../shared/decider.js';
import { decideMcpServer, type McpCommand } from './decide.js';
import { mcpEventSchemas, type McpEvent } from './events.js';
import { evolveMcpServer, initialMcpServerState, type McpServerState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './scope.js';
export * from './backoff.js';
export * from './input.js';
export * from './expiry.js';
export * from './stdio-policy.js';
export * from './url-policy.js';

/** The MCP server aggregate (stream `mcpserver-<serverId>`): registry, connection state, reconnect schedule. */
export const mcpServerDecider: Decider<McpCommand, McpServerState, McpEvent> = decider(initialMcpServerState, evolveMcpServer, decideMcpServer, mcpEventSchemas);
