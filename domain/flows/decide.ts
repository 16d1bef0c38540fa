import { decideByType } from '../shared/decider.js';
import type { FlowCommand } from './commands.js';
import { addConnection, addConnections, removeConnection, removeConnections, updateConnection } from './decide-connections.js';
import { createFlow, deleteFlow, renameFlow, replaceFlow, setArchived } from './decide-flow.js';
import { clearFlowHistory, clearNodeHistory, deleteHistoryEntry, recordNodeExecution } from './decide-history.js';
import { addNode, deleteNode, duplicateNode, updateNode } from './decide-nodes.js';
import { setMcpExposure } from './decide-mcp.js';
import { resealFlowSecrets } from './decide-secrets.js';
import { regenerateFlowTriggerKey, regenerateNodeTriggerKey, updateFlowTrigger, updateNodeTrigger } from './decide-triggers.js';
import type { FlowEvent } from './events.js';
import type { FlowState } from './state.js';

/** Each command to its part: decide-flow, decide-nodes, decide-connections, decide-triggers, decide-history, decide-secrets. */
export const decideFlow = decideByType<FlowCommand, FlowState, FlowEvent>({
  CreateFlow: createFlow, ReplaceFlow: replaceFlow, DeleteFlow: deleteFlow, ArchiveFlow: setArchived, UnarchiveFlow: setArchived, RenameFlow: renameFlow,
  AddNode: addNode, UpdateNode: updateNode, DeleteNode: deleteNode, DuplicateNode: duplicateNode,
  AddConnection: addConnection, UpdateConnection: updateConnection, RemoveConnection: removeConnection, AddConnections: addConnections, RemoveConnections: removeConnections,
  UpdateFlowTrigger: updateFlowTrigger, RegenerateFlowTriggerKey: regenerateFlowTriggerKey, UpdateNodeTrigger: updateNodeTrigger, RegenerateNodeTriggerKey: regenerateNodeTriggerKey,
  RecordNodeExecution: recordNodeExecution, DeleteHistoryEntry: deleteHistoryEntry, ClearNodeHistory: clearNodeHistory, ClearFlowHistory: clearFlowHistory,
  ResealFlowSecrets: resealFlowSecrets,
  SetMcpExposure: setMcpExposure,
});
