import { decideByType, DomainError } from '../shared/decider.js';
import type { OrgCommand } from './commands.js';
import { acceptInvitation, changeMemberRole, inviteMember, removeMember } from './decide-members.js';
import { createTeam, createWorkspace, deleteWorkspace, updateWorkspace } from './decide-workspaces.js';
import type { OrgEvent } from './events.js';
import { requirePermission } from './guards.js';
import type { OrgState } from './state.js';

export const DEFAULT_WORKSPACE_NAME = 'Default';

/** The organization aggregate: members and invitations in decide-members.ts, workspaces and teams in decide-workspaces.ts. */
export const decideOrg = decideByType<OrgCommand, OrgState, OrgEvent>({
  CreateOrganization: (command, state) => {
    if (state.exists) throw new DomainError('ORGANIZATION_EXISTS', 'organization already exists', 'conflict');
    const { orgId, name, description, creator, defaultWorkspaceId, at } = command;
    // Born with an owner and a workspace, so it is usable (and switchable into) at once.
    return [
      { type: 'OrganizationCreated', data: { orgId, name, description, createdBy: creator.userId, createdAt: at } },
      { type: 'MemberJoined', data: { userId: creator.userId, role: 'owner', email: creator.email, name: creator.name, via: 'creation', invitationId: null, at } },
      { type: 'WorkspaceCreated', data: { workspaceId: defaultWorkspaceId, name: DEFAULT_WORKSPACE_NAME, description: '', createdBy: creator.userId, at } },
    ];
  },
  UpdateOrganization: (command, state) => {
    requirePermission(state, command.actorId, 'manage_settings');
    const { actorId, at, type: _type, ...fields } = command;
    // Only what the command names changes; an absent field keeps its value.
    const changes = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    if (!Object.keys(changes).length) return [];
    return [{ type: 'OrganizationUpdated', data: { ...changes, updatedBy: actorId, at } }];
  },
  DeleteOrganization: (command, state) => {
    requirePermission(state, command.actorId, 'owner');
    return [{ type: 'OrganizationDeleted', data: { deletedBy: command.actorId, at: command.at } }];
  },
  ChangeMemberRole: changeMemberRole, RemoveMember: removeMember, InviteMember: inviteMember, AcceptInvitation: acceptInvitation,
  CreateWorkspace: createWorkspace, UpdateWorkspace: updateWorkspace, DeleteWorkspace: deleteWorkspace, CreateTeam: createTeam,
  SetLlmCredential: (command, state) => {
    requirePermission(state, command.actorId, 'manage_settings');
    const { provider, sealedApiKey, baseUrl, actorId, at } = command;
    return [{ type: 'LlmCredentialSet', data: { provider, sealedApiKey, baseUrl, setBy: actorId, at } }];
  },
  RemoveLlmCredential: (command, state) => {
    requirePermission(state, command.actorId, 'manage_settings');
    if (!state.llmProviders.includes(command.provider)) return [];
    return [{ type: 'LlmCredentialRemoved', data: { provider: command.provider, removedBy: command.actorId, at: command.at } }];
  },
});
