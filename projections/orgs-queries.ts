import type { ReadStore } from '../ports/read-store.js';
import { CREDENTIAL_COLLECTIONS, type UserAuthView } from './users-auth.js';
import { openLlmCredentials, type LlmCredential } from './users-llm-credentials.js';
import { ORG_COLLECTIONS as C, type InvitationView, type LlmCredentialView, type MemberView, type OrgView, type SpendView, type TeamView, type WorkspaceView } from './orgs-views.js';

export const getOrg = (store: ReadStore, orgId: string) => store.collection<OrgView>(C.orgs).findOne({ _id: orgId });

export const getMember = (store: ReadStore, orgId: string, userId: string) => store.collection<MemberView>(C.members).findOne({ _id: `${orgId}:${userId}` });

/** The caller's organizations with their role, oldest membership first. */
export async function listMyOrgs(store: ReadStore, userId: string, limit: number, cursor: string | null) {
  const page = await store.collection<MemberView>(C.members).page({ userId }, { sort: { joinedAt: 1 }, limit, cursor });
  const orgs = await store.collection<OrgView>(C.orgs).find({ _id: { $in: page.items.map((m) => m.orgId) } });
  const byId = new Map(orgs.map((o) => [o._id, o]));
  const items = page.items.flatMap((m) => {
    const org = byId.get(m.orgId);
    return org ? [{ org, role: m.role, joinedAt: m.joinedAt }] : [];
  });
  return { items, nextCursor: page.nextCursor };
}

/** Members with the name and email of their account now (profiles change after joining). */
export async function listMembers(store: ReadStore, orgId: string, limit: number, cursor: string | null) {
  const page = await store.collection<MemberView>(C.members).page({ orgId }, { sort: { joinedAt: 1 }, limit, cursor });
  const users = await store.collection<UserAuthView>(CREDENTIAL_COLLECTIONS.users).find({ _id: { $in: page.items.map((m) => m.userId) } });
  const byId = new Map(users.map((u) => [u._id, u]));
  const items = page.items.map((m) => ({ ...m, email: byId.get(m.userId)?.email ?? m.email, name: byId.get(m.userId)?.name ?? m.name }));
  return { items, nextCursor: page.nextCursor };
}

export const listInvitations = (store: ReadStore, orgId: string, limit: number, cursor: string | null) =>
  store.collection<InvitationView>(C.invitations).page({ orgId }, { sort: { createdAt: -1 }, limit, cursor });

export const getInvitation = (store: ReadStore, orgId: string, invitationId: string) =>
  store.collection<InvitationView>(C.invitations).findOne({ _id: invitationId, orgId });

export const listWorkspaces = (store: ReadStore, orgId: string, limit: number, cursor: string | null) =>
  store.collection<WorkspaceView>(C.workspaces).page({ orgId }, { sort: { createdAt: 1 }, limit, cursor });

/** Scoped by organization: a workspace id of another organization is simply not found. */
export const getWorkspace = (store: ReadStore, orgId: string, workspaceId: string) =>
  store.collection<WorkspaceView>(C.workspaces).findOne({ _id: workspaceId, orgId });

/** Where switching into an organization without naming a workspace lands. */
export const firstWorkspace = (store: ReadStore, orgId: string) => store.collection<WorkspaceView>(C.workspaces).findOne({ orgId }, { sort: { createdAt: 1, _id: 1 } });

export const listTeams = (store: ReadStore, orgId: string, limit: number, cursor: string | null) =>
  store.collection<TeamView>(C.teams).page({ orgId }, { sort: { createdAt: 1 }, limit, cursor });

export const getTeam = (store: ReadStore, orgId: string, teamId: string) => store.collection<TeamView>(C.teams).findOne({ _id: teamId, orgId });

/** US dollars spent in `period` (`YYYY-MM`). */
export async function spentUsd(store: ReadStore, orgId: string, period: string): Promise<number> {
  const doc = await store.collection<SpendView>(C.spend).findOne({ _id: `${orgId}:${period}` });
  return doc ? doc.spentMicroUsd / 1_000_000 : 0;
}

export const listLlmCredentialsSealed = (store: ReadStore, orgId: string) =>
  store.collection<LlmCredentialView>(C.llmCredentials).find({ orgId }, { sort: { provider: 1 } });

/** The execution engine's entry point: the organization's provider keys, opened. */
export async function readOrgLlmCredentials(
  services: { readStore: ReadStore; sealedBox: { open(sealed: string): string } },
  orgId: string,
): Promise<LlmCredential[]> {
  return openLlmCredentials(services.sealedBox, await listLlmCredentialsSealed(services.readStore, orgId));
}
