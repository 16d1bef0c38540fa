import type { Decider } from '../shared/decider.js';
import type { FlowCommand } from './commands.js';
import { decideFlow } from './decide.js';
import { flowEventSchemas, type FlowEvent } from './events.js';
import { evolveFlow, initialFlowState, type FlowState } from './state.js';

/**
 * The flow aggregate: one stream `flow-<id>` holds the flow, its nodes, edges, trigger settings
 * and node history. Everything here is pure; see README "Flows" for the event catalogue.
 */
export * from './commands.js';
export * from './events.js';
export * from './graph.js';
export * from './limits.js';
export * from './llm-catalogue.js';
export { MCP_TOOL_NAME_PATTERN, OPEN_INPUT_SCHEMA, mcpInputSchemaSchema, mcpToolNameSchema, sanitizeToolName, toolInputSchemaOf, type McpExposure } from './mcp-exposure.js';
export * from './node-data.js';
export * from './node-types.js';
export * from './secrets.js';
export * from './state.js';
export * from './validate-node.js';
export * from './view.js';
export { FLOW_ERROR_CODES, flowNotFound, nodeNotFound, connectionNotFound, historyEntryNotFound, validationFailed } from './guards.js';
export { DUPLICATE_OFFSET } from './decide-nodes.js';
export { boundOutput } from './decide-history.js';
export { jsonEqual } from './json.js';
export { decideFlow } from './decide.js';

export const flowStreamId = (flowId: string) => `flow-${flowId}`;

export const flowDecider: Decider<FlowCommand, FlowState, FlowEvent> = {
  initialState: initialFlowState,
  eventSchemas: flowEventSchemas,
  evolve: evolveFlow,
  decide: decideFlow,
  // A flow edited for years is a long stream: snapshotted (commands/snapshots.ts). Bump when evolveFlow folds differently (2: `mcp`).
  stateVersion: 2,
};
