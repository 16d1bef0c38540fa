import type { FlowCommand } from './commands.js';
import { addConnection, addConnections, removeConnection, removeConnections, updateConnection } from './decide-connections.js';
import { createFlow, deleteFlow, renameFlow, replaceFlow, setArchived } from './decide-flow.js';
import { clearFlowHistory, clearNodeHistory, deleteHistoryEntry, recordNodeExecution } from './decide-history.js';
import { addNode, deleteNode, duplicateNode, updateNode } from './decide-nodes.js';
import { resealFlowSecrets } from './decide-secrets.js';
import { regenerateFlowTriggerKey, regenerateNodeTriggerKey, updateFlowTrigger, updateNodeTrigger } from './decide-triggers.js';
import type { FlowEvent } from './events.js';
import type { FlowState } from './state.js';

/** Each command to its part: decide-flow, decide-nodes, decide-connections, decide-triggers, decide-history, decide-secrets. */
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
    case 'ResealFlowSecrets':
      return resealFlowSecrets(command, state);
  }
}
