import type { Services } from '../services.js';

/** What the MCP context keeps per process (open connections, waiters); closed with the services. */
export interface McpRuntime {
  close(): Promise<void>;
}

export function createMcpRuntime(_services: () => Services): McpRuntime {
  return { async close() {} };
}
