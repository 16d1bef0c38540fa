import type { Decider } from '../shared/decider.js';
import type { FlowCommand } from './commands.js';
import { addConnection, addConnections, removeConnection, removeConnections, updateConnection } from './decide-connections.js';
import { createFlow, deleteFlow, renameFlow, replaceFlow, setArchived } from './decide-flow.js';
import { clearFlowHistory, clearNodeHistory, deleteHistoryEntry, recordNodeExecution } from './decide-history.js';
import { addNode, deleteNode, duplicateNode, updateNode } from './decide-nodes.js';
import { regenerateFlowTriggerKey, regenerateNodeTriggerKey, updateFlowTrigger, updateNodeTrigger } from './decide-triggers.js';
import { flowEventSchemas, type FlowEvent } from './events.js';
import { evolveFlow } from './evolve.js';
import { initialFlowState, type FlowState } from './state.js';

/**
 * The flow aggregate: one stream `flow-<id>` holds the flow, its nodes, edges, trigger settings
 * and node history. Everything here is pure; see README "Flows" for the event catalogue.
 */
export * from './commands.js';
export * from './events.js';
export * from './graph.js';
export * from './limits.js';
export * from './llm-catalogue.js';
export * from './node-data.js';
export * from './node-types.js';
export * from './state.js';
export * from './validate-node.js';
export * from './view.js';
export { FLOW_ERROR_CODES, flowNotFound, nodeNotFound, connectionNotFound, historyEntryNotFound, validationFailed } from './guards.js';
export { DUPLICATE_OFFSET } from './decide-nodes.js';
export { boundOutput } from './decide-history.js';
export { jsonEqual } from './json.js';
export { evolveFlow } from './evolve.js';

export const flowStreamId = (flowId: string) => `flow-${flowId}`;

export function decideFlow(command: FlowCommand, state: FlowState): FlowEvent[] {
  switch (command.type) {
    case 'CreateFlow':
      return createFlow(command, state);
    case 'ReplaceFlow':
      return replaceFlow(command, state);
    case 'DeleteFlow':
      return deleteFlow(command, state);
    case 'ArchiveFlow':
    case 'UnarchiveFlow':
      return setArchived(command, state);
    case 'RenameFlow':
      return renameFlow(command, state);
    case 'AddNode':
      return addNode(command, state);
    case 'UpdateNode':
      return updateNode(command, state);
    case 'DeleteNode':
      return deleteNode(command, state);
    case 'DuplicateNode':
      return duplicateNode(command, state);
    case 'AddConnection':
      return addConnection(command, state);
    case 'UpdateConnection':
      return updateConnection(command, state);
    case 'RemoveConnection':
      return removeConnection(command, state);
    case 'AddConnections':
      return addConnections(command, state);
    case 'RemoveConnections':
      return removeConnections(command, state);
    case 'UpdateFlowTrigger':
      return updateFlowTrigger(command, state);
    case 'RegenerateFlowTriggerKey':
      return regenerateFlowTriggerKey(command, state);
    case 'UpdateNodeTrigger':
      return updateNodeTrigger(command, state);
    case 'RegenerateNodeTriggerKey':
      return regenerateNodeTriggerKey(command, state);
    case 'RecordNodeExecution':
      return recordNodeExecution(command, state);
    case 'DeleteHistoryEntry':
      return deleteHistoryEntry(command, state);
    case 'ClearNodeHistory':
      return clearNodeHistory(command, state);
    case 'ClearFlowHistory':
      return clearFlowHistory(command, state);
  }
}

export const flowDecider: Decider<FlowCommand, FlowState, FlowEvent> = {
  initialState: initialFlowState,
  eventSchemas: flowEventSchemas,
  evolve: evolveFlow,
  decide: decideFlow,
};
