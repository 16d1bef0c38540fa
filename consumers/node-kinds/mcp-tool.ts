import { RunInputError, type NodeKind } from '../../domain/runs/index.js';
import type { Services } from '../../infra/services.js';

/** `data.nodeType: "mcp_tool"`: runs a tool of a registered MCP server. */
export function mcpToolKind(_services: Services): NodeKind {
  return {
    type: 'mcp_tool',
    async execute() {
      throw new RunInputError('CAPABILITY_MISSING', 'mcp_tool nodes are not available yet');
    },
  };
}
