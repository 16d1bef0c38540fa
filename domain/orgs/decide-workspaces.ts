import { DomainError } from '../shared/decider.js';
import type { OrgCommand } from './commands.js';
import type { OrgEvent } from './events.js';
import { requirePermission } from './guards.js';
import type { OrgState } from './state.js';

type Cmd<T extends OrgCommand['type']> = Extract<OrgCommand, { type: T }>;

const workspaceNotFound = () => new DomainError('WORKSPACE_NOT_FOUND', 'workspace not found', 'not_found');
const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function assertWorkspaceNameFree(state: OrgState, name: string, except?: string) {
  const taken = Object.entries(state.workspaces).some(([id, ws]) => id !== except && sameName(ws.name, name));
  if (taken) throw new DomainError('WORKSPACE_NAME_TAKEN', `a workspace named "${name}" already exists in this organization`, 'conflict', { field: 'body.name' });
}

export function createWorkspace(command: Cmd<'CreateWorkspace'>, state: OrgState): OrgEvent[] {
  requirePermission(state, command.actorId, 'manage_workspaces');
  if (state.workspaces[command.workspaceId]) throw new DomainError('WORKSPACE_EXISTS', 'workspace id already used', 'conflict');
  assertWorkspaceNameFree(state, command.name);
  const { workspaceId, name, description, actorId, at } = command;
  return [{ type: 'WorkspaceCreated', data: { workspaceId, name, description, createdBy: actorId, at } }];
}

export function updateWorkspace(command: Cmd<'UpdateWorkspace'>, state: OrgState): OrgEvent[] {
  requirePermission(state, command.actorId, 'manage_workspaces');
  const workspace = state.workspaces[command.workspaceId];
  if (!workspace) throw workspaceNotFound();
  if (command.name !== undefined) assertWorkspaceNameFree(state, command.name, command.workspaceId);
  const { workspaceId, name, description, actorId, at } = command;
  if (name === undefined && description === undefined) return [];
  return [{ type: 'WorkspaceUpdated', data: { workspaceId, ...(name !== undefined && { name }), ...(description !== undefined && { description }), updatedBy: actorId, at } }];
}

export function deleteWorkspace(command: Cmd<'DeleteWorkspace'>, state: OrgState): OrgEvent[] {
  requirePermission(state, command.actorId, 'manage_workspaces');
  if (!state.workspaces[command.workspaceId]) throw workspaceNotFound();
  // Switching into an organization lands in a workspace, so one must always remain.
  if (Object.keys(state.workspaces).length === 1) throw new DomainError('LAST_WORKSPACE', 'an organization keeps at least one workspace', 'conflict');
  // The default workspace is the first in creation order (where a switch without a workspace lands).
  const fallbackWorkspaceId = Object.keys(state.workspaces).find((id) => id !== command.workspaceId)!;
  return [{ type: 'WorkspaceDeleted', data: { workspaceId: command.workspaceId, deletedBy: command.actorId, fallbackWorkspaceId, at: command.at } }];
}

export function createTeam(command: Cmd<'CreateTeam'>, state: OrgState): OrgEvent[] {
  requirePermission(state, command.actorId, 'manage_teams');
  if (state.teams[command.teamId]) throw new DomainError('TEAM_EXISTS', 'team id already used', 'conflict');
  if (Object.values(state.teams).some((t) => sameName(t.name, command.name))) {
    throw new DomainError('TEAM_NAME_TAKEN', `a team named "${command.name}" already exists in this organization`, 'conflict', { field: 'body.name' });
  }
  const strangers = command.memberIds.filter((id) => !state.members[id]);
  if (strangers.length > 0) {
    throw new DomainError('TEAM_MEMBER_NOT_FOUND', 'every team member must be a member of the organization', 'invalid', { field: 'memberIds', userIds: strangers });
  }
  const { teamId, name, description, actorId, at } = command;
  return [{ type: 'TeamCreated', data: { teamId, name, description, memberIds: [...new Set(command.memberIds)], createdBy: actorId, at } }];
}
