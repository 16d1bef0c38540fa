import { DomainError } from '../domain/shared/decider.js';
import type { Role } from '../domain/shared/permissions.js';
import type { LlmProvider } from '../domain/orgs/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { CommandContext } from './handle.js';
import { handleOrgCommand } from './orgs-handle.js';

export { handleOrgCommand } from './orgs-handle.js';
export { inviteMember, acceptInvitation } from './orgs-invitations.js';
export { recordLlmSpend } from './orgs-budget.js';

export interface Creator {
  userId: string;
  email: string | null;
  name: string | null;
}

export function createOrganization(
  store: EventStore,
  context: CommandContext,
  ids: { orgId: string; defaultWorkspaceId: string },
  input: { name: string; description?: string; creator: Creator },
) {
  // The new organization is its own scope: its events say so in their metadata.
  const scoped = { ...context, orgId: ids.orgId, workspaceId: ids.defaultWorkspaceId };
  return handleOrgCommand(store, scoped, ids.orgId, {
    type: 'CreateOrganization',
    orgId: ids.orgId,
    name: input.name,
    description: input.description ?? '',
    creator: input.creator,
    defaultWorkspaceId: ids.defaultWorkspaceId,
  });
}

const inOrg = (context: CommandContext, orgId: string) => ({ ...context, orgId });

export function updateOrganization(
  store: EventStore,
  context: CommandContext,
  orgId: string,
  actorId: string,
  changes: { name?: string; description?: string; budgetLimitUsd?: number | null; runHistoryKeepDays?: number | null; runHistoryKeepLast?: number | null },
) {
  return handleOrgCommand(store, inOrg(context, orgId), orgId, { type: 'UpdateOrganization', actorId, ...changes });
}

export function deleteOrganization(store: EventStore, context: CommandContext, orgId: string, actorId: string) {
  return handleOrgCommand(store, inOrg(context, orgId), orgId, { type: 'DeleteOrganization', actorId });
}

export function changeMemberRole(store: EventStore, context: CommandContext, orgId: string, actorId: string, userId: string, role: Role) {
  return handleOrgCommand(store, inOrg(context, orgId), orgId, { type: 'ChangeMemberRole', actorId, userId, role });
}

export function removeMember(store: EventStore, context: CommandContext, orgId: string, actorId: string, userId: string) {
  return handleOrgCommand(store, inOrg(context, orgId), orgId, { type: 'RemoveMember', actorId, userId });
}

export function createWorkspace(
  store: EventStore,
  context: CommandContext,
  orgId: string,
  actorId: string,
  input: { workspaceId: string; name: string; description?: string },
) {
  const { workspaceId, name, description = '' } = input;
  return handleOrgCommand(store, { ...inOrg(context, orgId), workspaceId }, orgId, { type: 'CreateWorkspace', actorId, workspaceId, name, description });
}

export function updateWorkspace(
  store: EventStore,
  context: CommandContext,
  orgId: string,
  actorId: string,
  workspaceId: string,
  changes: { name?: string; description?: string },
) {
  return handleOrgCommand(store, { ...inOrg(context, orgId), workspaceId }, orgId, { type: 'UpdateWorkspace', actorId, workspaceId, ...changes });
}

export function deleteWorkspace(store: EventStore, context: CommandContext, orgId: string, actorId: string, workspaceId: string) {
  return handleOrgCommand(store, { ...inOrg(context, orgId), workspaceId }, orgId, { type: 'DeleteWorkspace', actorId, workspaceId });
}

export async function createTeam(
  store: EventStore,
  context: CommandContext,
  orgId: string,
  actorId: string,
  input: { teamId: string; name: string; description?: string; memberIds?: string[] },
) {
  const { teamId, name, description = '', memberIds = [] } = input;
  try {
    return await handleOrgCommand(store, inOrg(context, orgId), orgId, { type: 'CreateTeam', actorId, teamId, name, description, memberIds });
  } catch (err) {
    // Said in the request's terms: the body field that holds the strangers.
    if (err instanceof DomainError && err.code === 'TEAM_MEMBER_NOT_FOUND') {
      const userIds = (err.details as { userIds: string[] }).userIds;
      throw new DomainError(err.code, err.message, 'invalid', {
        userIds,
        fields: userIds.map((id) => ({ field: `body.memberIds.${memberIds.indexOf(id)}`, message: `${id} is not a member of this organization` })),
      });
    }
    throw err;
  }
}

/**
 * Upserts (or with `apiKey: null` removes) one provider's key. The key is sealed before it becomes
 * a command, so the plaintext never reaches the decider, the event or the log.
 */
export function setLlmCredential(
  store: EventStore,
  context: CommandContext,
  orgId: string,
  actorId: string,
  input: { provider: LlmProvider; apiKey: string | null; baseUrl: string | null },
  seal: (plaintext: string) => string,
) {
  if (input.apiKey === null) return handleOrgCommand(store, inOrg(context, orgId), orgId, { type: 'RemoveLlmCredential', actorId, provider: input.provider });
  return handleOrgCommand(store, inOrg(context, orgId), orgId, {
    type: 'SetLlmCredential',
    actorId,
    provider: input.provider,
    sealedApiKey: seal(input.apiKey),
    baseUrl: input.baseUrl,
  });
}
