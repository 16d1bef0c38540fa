import { DomainError } from '../shared/decider.js';
import type { FlowCommandOf } from './commands.js';
import { buildDefinition, nameProblems } from './definition.js';
import { settleGraphSecrets } from './decide-secrets.js';
import type { FlowEvent } from './events.js';
import { requireFlow, validationFailed } from './guards.js';
import type { FlowState } from './state.js';

export function createFlow(command: FlowCommandOf<'CreateFlow'>, state: FlowState): FlowEvent[] {
  // A deleted flow keeps its stream (and its audit trail), so its id is never reused either.
  if (state.exists) throw new DomainError('FLOW_ALREADY_EXISTS', `flow ${command.flowId} already exists`, 'conflict');
  const { flowId, ownerId, orgId, workspaceId, at } = command;
  const named = nameProblems(command.name, command.description);
  const { nodes, edges } = buildDefinition(settleGraphSecrets(command.nodes ?? [], state), command.edges ?? [], named.problems);
  return [
    {
      type: 'FlowCreated',
      data: { flowId, name: named.name, description: named.description, ownerId, orgId, workspaceId, nodes, edges, createdAt: at },
    },
  ];
}

/** Replaces name, description, nodes and edges at once; triggers and history of surviving node ids stay. */
export function replaceFlow(command: FlowCommandOf<'ReplaceFlow'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const named = nameProblems(command.name, command.description);
  const { nodes, edges } = buildDefinition(settleGraphSecrets(command.nodes, state), command.edges, named.problems);
  const restored = command.restoredFrom === undefined ? {} : { restoredFrom: command.restoredFrom };
  return [{ type: 'FlowReplaced', data: { name: named.name, description: named.description, nodes, edges, at: command.at, ...restored } }];
}

export function deleteFlow(command: FlowCommandOf<'DeleteFlow'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  return [{ type: 'FlowDeleted', data: { at: command.at } }];
}

/** Archiving is a list filter, not a lock: archived flows stay editable. Repeating it is no event. */
export function setArchived(command: FlowCommandOf<'ArchiveFlow' | 'UnarchiveFlow'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const archive = command.type === 'ArchiveFlow';
  if (state.archived === archive) return [];
  return [{ type: archive ? 'FlowArchived' : 'FlowUnarchived', data: { at: command.at } }];
}

export function renameFlow(command: FlowCommandOf<'RenameFlow'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const named = nameProblems(command.name, '');
  if (named.problems.length > 0) throw validationFailed(named.problems);
  if (named.name === state.name) return [];
  return [{ type: 'FlowRenamed', data: { name: named.name, previousName: state.name, at: command.at } }];
}
