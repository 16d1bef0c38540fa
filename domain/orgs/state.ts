import type { Role } from '../shared/permissions.js';
import type { LlmProvider, OrgEvent } from './events.js';

export interface MemberState {
  role: Role;
  email: string | null;
}

export interface InvitationState {
  email: string;
  role: Role;
  secretHash: string;
  expiresAt: string;
  acceptedBy: string | null;
}

export interface OrgState {
  exists: boolean;
  deleted: boolean;
  name: string;
  members: Record<string, MemberState>;
  invitations: Record<string, InvitationState>;
  /** In creation order: the first one is where a switch without a workspace lands. */
  workspaces: Record<string, { name: string }>;
  teams: Record<string, { name: string; memberIds: string[] }>;
  llmProviders: LlmProvider[];
}

export const initialOrgState: OrgState = {
  exists: false,
  deleted: false,
  name: '',
  members: {},
  invitations: {},
  workspaces: {},
  teams: {},
  llmProviders: [],
};

function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const { [key]: _removed, ...rest } = record;
  return rest;
}

export function evolveOrg(state: OrgState, event: OrgEvent): OrgState {
  switch (event.type) {
    case 'OrganizationCreated':
      return { ...initialOrgState, exists: true, name: event.data.name };
    case 'OrganizationUpdated':
      return { ...state, name: event.data.name ?? state.name };
    case 'OrganizationDeleted':
      return { ...state, deleted: true };
    case 'MemberJoined':
      return { ...state, members: { ...state.members, [event.data.userId]: { role: event.data.role, email: event.data.email } } };
    case 'MemberRoleChanged': {
      const member = state.members[event.data.userId];
      if (!member) return state;
      return { ...state, members: { ...state.members, [event.data.userId]: { ...member, role: event.data.to } } };
    }
    case 'MemberRemoved': {
      // A removed member leaves every team too, so a team never lists a stranger.
      const teams = Object.fromEntries(
        Object.entries(state.teams).map(([id, team]) => [id, { ...team, memberIds: team.memberIds.filter((m) => m !== event.data.userId) }]),
      );
      return { ...state, members: without(state.members, event.data.userId), teams };
    }
    case 'InvitationCreated': {
      const { invitationId, email, role, secretHash, expiresAt } = event.data;
      return { ...state, invitations: { ...state.invitations, [invitationId]: { email, role, secretHash, expiresAt, acceptedBy: null } } };
    }
    case 'InvitationAccepted': {
      const invitation = state.invitations[event.data.invitationId];
      if (!invitation) return state;
      return { ...state, invitations: { ...state.invitations, [event.data.invitationId]: { ...invitation, acceptedBy: event.data.userId } } };
    }
    case 'WorkspaceCreated':
      return { ...state, workspaces: { ...state.workspaces, [event.data.workspaceId]: { name: event.data.name } } };
    case 'WorkspaceUpdated': {
      const workspace = state.workspaces[event.data.workspaceId];
      if (!workspace) return state;
      return { ...state, workspaces: { ...state.workspaces, [event.data.workspaceId]: { name: event.data.name ?? workspace.name } } };
    }
    case 'WorkspaceDeleted':
      return { ...state, workspaces: without(state.workspaces, event.data.workspaceId) };
    case 'TeamCreated':
      return { ...state, teams: { ...state.teams, [event.data.teamId]: { name: event.data.name, memberIds: event.data.memberIds } } };
    case 'LlmCredentialSet':
      return state.llmProviders.includes(event.data.provider) ? state : { ...state, llmProviders: [...state.llmProviders, event.data.provider] };
    case 'LlmCredentialRemoved':
      return { ...state, llmProviders: state.llmProviders.filter((p) => p !== event.data.provider) };
    default:
      return state;
  }
}

export const ownerCount = (state: OrgState) => Object.values(state.members).filter((m) => m.role === 'owner').length;
