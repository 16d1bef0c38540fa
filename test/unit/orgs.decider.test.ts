import { expect } from 'chai';
import { orgDecider, orgEventSchemas, type OrgCommand, type OrgEvent } from '../../domain/orgs/index.js';
import type { Role } from '../../domain/shared/permissions.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const hash = (c: string) => c.repeat(64);
const spec = deciderSpec(orgDecider);


const created = orgDecider.decide(
  { type: 'CreateOrganization', orgId: 'o1', name: 'Acme', description: '', creator: { userId: 'owner', email: 'owner@x.test', name: 'O' }, defaultWorkspaceId: 'w1', at },
  orgDecider.initialState,
);
const joined = (userId: string, role: Role, email = `${userId}@x.test`): OrgEvent => ({
  type: 'MemberJoined',
  data: { userId, role, email, name: null, via: 'invitation', invitationId: null, at },
});
const team = [...created, joined('admin', 'admin'), joined('editor', 'editor'), joined('viewer', 'viewer')];
const deleted: OrgEvent = { type: 'OrganizationDeleted', data: { deletedBy: 'owner', at } };

describe('organization decider: lifecycle', () => {
  it('creates an organization with its creator as owner and a Default workspace', () => {
    expect(created.map((e) => e.type)).to.deep.equal(['OrganizationCreated', 'MemberJoined', 'WorkspaceCreated']);
    expect(created[1].data).to.include({ userId: 'owner', role: 'owner', via: 'creation' });
    expect(created[2].data).to.include({ workspaceId: 'w1', name: 'Default' });
    const state = spec.stateOf(created);
    expect(state.members.owner.role).to.equal('owner');
    expect(Object.keys(state.workspaces)).to.deep.equal(['w1']);
  });

  it('refuses to create it twice', () => {
    spec.given(created).when({ type: 'CreateOrganization', orgId: 'o1', name: 'A', description: '', creator: { userId: 'u', email: null, name: null }, defaultWorkspaceId: 'w', at }).thenThrows('ORGANIZATION_EXISTS', 'conflict');
  });

  it('updates name, description and budget limit (manage_settings); nothing to change is no event', () => {
    const out = spec.given(team).when({ type: 'UpdateOrganization', actorId: 'admin', name: 'New', budgetLimitUsd: 50, at }).events();
    expect(out).to.deep.equal([{ type: 'OrganizationUpdated', data: { name: 'New', budgetLimitUsd: 50, updatedBy: 'admin', at } }]);
    expect(spec.given(team).when({ type: 'UpdateOrganization', actorId: 'admin', budgetLimitUsd: null, at }).events()[0].data).to.include({ budgetLimitUsd: null });
    spec.given(team).when({ type: 'UpdateOrganization', actorId: 'admin', at }).then([]);
    spec.given(team).when({ type: 'UpdateOrganization', actorId: 'editor', name: 'X', at }).thenThrows('FORBIDDEN', 'forbidden');
    spec.given(team).when({ type: 'UpdateOrganization', actorId: 'stranger', name: 'X', at }).thenThrows('ORGANIZATION_NOT_FOUND', 'not_found');
  });

  it('deletes only for an owner, and a deleted organization accepts nothing more', () => {
    spec.given(team).when({ type: 'DeleteOrganization', actorId: 'owner', at }).then([deleted]);
    spec.given(team).when({ type: 'DeleteOrganization', actorId: 'admin', at }).thenThrows('FORBIDDEN', 'forbidden');
    spec.given([...team, deleted]).when({ type: 'DeleteOrganization', actorId: 'owner', at }).thenThrows('ORGANIZATION_NOT_FOUND', 'not_found');
    spec.given([...team, deleted]).when({ type: 'UpdateOrganization', actorId: 'owner', name: 'X', at }).thenThrows('ORGANIZATION_NOT_FOUND');
    spec.given([]).when({ type: 'UpdateOrganization', actorId: 'owner', name: 'X', at }).thenThrows('ORGANIZATION_NOT_FOUND');
  });
});

describe('organization decider: members', () => {
  it('changes a role (manage_members); the same role is no event', () => {
    spec.given(team).when({ type: 'ChangeMemberRole', actorId: 'admin', userId: 'viewer', role: 'editor', at }).then([
      { type: 'MemberRoleChanged', data: { userId: 'viewer', from: 'viewer', to: 'editor', changedBy: 'admin', at } },
    ]);
    spec.given(team).when({ type: 'ChangeMemberRole', actorId: 'admin', userId: 'viewer', role: 'viewer', at }).then([]);
    spec.given(team).when({ type: 'ChangeMemberRole', actorId: 'editor', userId: 'viewer', role: 'editor', at }).thenThrows('FORBIDDEN', 'forbidden');
    spec.given(team).when({ type: 'ChangeMemberRole', actorId: 'admin', userId: 'nobody', role: 'editor', at }).thenThrows('MEMBER_NOT_FOUND', 'not_found');
  });

  it('lets only an owner grant or take away the owner role', () => {
    spec.given(team).when({ type: 'ChangeMemberRole', actorId: 'admin', userId: 'editor', role: 'owner', at }).thenThrows('OWNER_ROLE_REQUIRED', 'forbidden');
    spec.given(team).when({ type: 'ChangeMemberRole', actorId: 'admin', userId: 'owner', role: 'admin', at }).thenThrows('OWNER_ROLE_REQUIRED', 'forbidden');
    expect(spec.given(team).when({ type: 'ChangeMemberRole', actorId: 'owner', userId: 'admin', role: 'owner', at }).events()).to.have.length(1);
  });

  it('never demotes the last owner, but a second owner makes it possible', () => {
    spec.given(team).when({ type: 'ChangeMemberRole', actorId: 'owner', userId: 'owner', role: 'admin', at }).thenThrows('LAST_OWNER', 'conflict');
    const twoOwners = [...team, ...spec.given(team).when({ type: 'ChangeMemberRole', actorId: 'owner', userId: 'admin', role: 'owner', at }).events()];
    expect(spec.given(twoOwners).when({ type: 'ChangeMemberRole', actorId: 'admin', userId: 'owner', role: 'viewer', at }).events()).to.have.length(1);
  });

  it('removes a member (manage_members) and drops them from teams', () => {
    const teamCreated: OrgEvent = { type: 'TeamCreated', data: { teamId: 't1', name: 'T', description: '', memberIds: ['viewer', 'editor'], createdBy: 'admin', at } };
    const out = spec.given([...team, teamCreated]).when({ type: 'RemoveMember', actorId: 'admin', userId: 'viewer', at }).events();
    expect(out).to.deep.equal([{ type: 'MemberRemoved', data: { userId: 'viewer', removedBy: 'admin', left: false, at } }]);
    const state = spec.stateOf([...team, teamCreated, ...out]);
    expect(state.members.viewer).to.equal(undefined);
    expect(state.teams.t1.memberIds).to.deep.equal(['editor']);
    spec.given(team).when({ type: 'RemoveMember', actorId: 'editor', userId: 'viewer', at }).thenThrows('FORBIDDEN', 'forbidden');
    spec.given(team).when({ type: 'RemoveMember', actorId: 'admin', userId: 'nobody', at }).thenThrows('MEMBER_NOT_FOUND', 'not_found');
    spec.given(team).when({ type: 'RemoveMember', actorId: 'stranger', userId: 'viewer', at }).thenThrows('ORGANIZATION_NOT_FOUND', 'not_found');
  });

  it('lets any member leave, except the last owner', () => {
    expect(spec.given(team).when({ type: 'RemoveMember', actorId: 'viewer', userId: 'viewer', at }).events()[0].data).to.include({ left: true });
    spec.given(team).when({ type: 'RemoveMember', actorId: 'owner', userId: 'owner', at }).thenThrows('LAST_OWNER', 'conflict');
  });

  it('lets only an owner remove an owner', () => {
    const twoOwners = [...team, joined('owner2', 'owner')];
    spec.given(twoOwners).when({ type: 'RemoveMember', actorId: 'admin', userId: 'owner2', at }).thenThrows('OWNER_ROLE_REQUIRED', 'forbidden');
    expect(spec.given(twoOwners).when({ type: 'RemoveMember', actorId: 'owner', userId: 'owner2', at }).events()).to.have.length(1);
  });
});

describe('organization decider: invitations', () => {
  const invite = (over: Partial<Extract<OrgCommand, { type: 'InviteMember' }>> = {}): OrgCommand => ({
    type: 'InviteMember', actorId: 'admin', invitationId: 'i1', email: 'New@X.test', role: 'editor', secretHash: hash('a'), expiresAt: later, at, ...over,
  });
  const invited = () => [...team, ...spec.given(team).when(invite()).events()];
  const accept = (over: Partial<Extract<OrgCommand, { type: 'AcceptInvitation' }>> = {}): OrgCommand => ({
    type: 'AcceptInvitation', invitationId: 'i1', secretHash: hash('a'), userId: 'newbie', email: 'new@x.TEST', name: 'N', at, ...over,
  });

  it('invites by email (lower-cased), storing only the secret hash', () => {
    spec.given(team).when(invite()).then([
      { type: 'InvitationCreated', data: { invitationId: 'i1', email: 'new@x.test', role: 'editor', secretHash: hash('a'), expiresAt: later, invitedBy: 'admin', at } },
    ]);
  });

  it('refuses inviting without manage_members, an owner by a non-owner, and an existing member', () => {
    spec.given(team).when(invite({ actorId: 'editor' })).thenThrows('FORBIDDEN', 'forbidden');
    spec.given(team).when(invite({ role: 'owner' })).thenThrows('OWNER_ROLE_REQUIRED', 'forbidden');
    expect(spec.given(team).when(invite({ actorId: 'owner', role: 'owner' })).events()).to.have.length(1);
    spec.given(team).when(invite({ email: 'VIEWER@x.test' })).thenThrows('ALREADY_A_MEMBER', 'conflict');
    spec.given(invited()).when(invite()).thenThrows('INVITATION_EXISTS', 'conflict');
  });

  it('accepting makes the user a member with the invited role', () => {
    const out = spec.given(invited()).when(accept()).events();
    expect(out.map((e) => e.type)).to.deep.equal(['InvitationAccepted', 'MemberJoined']);
    expect(out[1].data).to.include({ userId: 'newbie', role: 'editor', via: 'invitation', invitationId: 'i1', email: 'new@x.test' });
    expect(spec.stateOf([...invited(), ...out]).members.newbie.role).to.equal('editor');
  });

  it('is single use', () => {
    const used = [...invited(), ...spec.given(invited()).when(accept()).events()];
    spec.given(used).when(accept({ userId: 'other' })).thenThrows('INVITATION_ALREADY_USED', 'conflict');
  });

  it('expires', () => {
    spec.given(invited()).when(accept({ at: later })).thenThrows('INVITATION_EXPIRED', 'gone');
  });

  it('answers not found for an unknown invitation, a wrong secret or a deleted organization', () => {
    spec.given(invited()).when(accept({ invitationId: 'nope' })).thenThrows('INVITATION_NOT_FOUND', 'not_found');
    spec.given(invited()).when(accept({ secretHash: hash('b') })).thenThrows('INVITATION_NOT_FOUND', 'not_found');
    spec.given([]).when(accept()).thenThrows('INVITATION_NOT_FOUND', 'not_found');
    spec.given([...invited(), deleted]).when(accept()).thenThrows('INVITATION_NOT_FOUND', 'not_found');
  });

  it('only the invited address may accept, and not a member twice', () => {
    spec.given(invited()).when(accept({ email: 'someone@else.test' })).thenThrows('INVITATION_EMAIL_MISMATCH', 'forbidden');
    spec.given(invited()).when(accept({ userId: 'viewer' })).thenThrows('ALREADY_A_MEMBER', 'conflict');
  });
});

describe('organization decider: workspaces and teams', () => {
  it('creates, renames and deletes workspaces (manage_workspaces)', () => {
    const createdWs = spec.given(team).when({ type: 'CreateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'Research', description: 'r', at }).events();
    expect(createdWs).to.deep.equal([{ type: 'WorkspaceCreated', data: { workspaceId: 'w2', name: 'Research', description: 'r', createdBy: 'admin', at } }]);
    const two = [...team, ...createdWs];
    expect(spec.given(two).when({ type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'R&D', at }).events()[0].data).to.include({ name: 'R&D' });
    spec.given(two).when({ type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'w2', at }).then([]);
    expect(spec.given(two).when({ type: 'DeleteWorkspace', actorId: 'admin', workspaceId: 'w2', at }).events()[0].type).to.equal('WorkspaceDeleted');
    spec.given(two).when({ type: 'CreateWorkspace', actorId: 'editor', workspaceId: 'w3', name: 'X', description: '', at }).thenThrows('FORBIDDEN', 'forbidden');
    spec.given(two).when({ type: 'UpdateWorkspace', actorId: 'viewer', workspaceId: 'w2', name: 'X', at }).thenThrows('FORBIDDEN', 'forbidden');
    spec.given(two).when({ type: 'DeleteWorkspace', actorId: 'editor', workspaceId: 'w2', at }).thenThrows('FORBIDDEN', 'forbidden');
  });

  it('keeps workspace names unique (case-insensitive) and refuses unknown ids', () => {
    spec.given(team).when({ type: 'CreateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'default', description: '', at }).thenThrows('WORKSPACE_NAME_TAKEN', 'conflict');
    spec.given(team).when({ type: 'CreateWorkspace', actorId: 'admin', workspaceId: 'w1', name: 'Other', description: '', at }).thenThrows('WORKSPACE_EXISTS', 'conflict');
    const two = [...team, ...spec.given(team).when({ type: 'CreateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'Two', description: '', at }).events()];
    spec.given(two).when({ type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'DEFAULT', at }).thenThrows('WORKSPACE_NAME_TAKEN', 'conflict');
    expect(spec.given(two).when({ type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'two', at }).events()).to.have.length(1);
    spec.given(team).when({ type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'nope', name: 'X', at }).thenThrows('WORKSPACE_NOT_FOUND', 'not_found');
    spec.given(team).when({ type: 'DeleteWorkspace', actorId: 'admin', workspaceId: 'nope', at }).thenThrows('WORKSPACE_NOT_FOUND', 'not_found');
  });

  it('never deletes the last workspace', () => {
    spec.given(team).when({ type: 'DeleteWorkspace', actorId: 'owner', workspaceId: 'w1', at }).thenThrows('LAST_WORKSPACE', 'conflict');
  });

  it('creates teams of members only (manage_teams), de-duplicating ids', () => {
    const out = spec.given(team).when({ type: 'CreateTeam', actorId: 'admin', teamId: 't1', name: 'Core', description: '', memberIds: ['editor', 'viewer', 'editor'], at }).events();
    expect(out).to.deep.equal([{ type: 'TeamCreated', data: { teamId: 't1', name: 'Core', description: '', memberIds: ['editor', 'viewer'], createdBy: 'admin', at } }]);
    const withTeam = [...team, ...out];
    spec.given(withTeam).when({ type: 'CreateTeam', actorId: 'admin', teamId: 't2', name: 'CORE', description: '', memberIds: [], at }).thenThrows('TEAM_NAME_TAKEN', 'conflict');
    spec.given(withTeam).when({ type: 'CreateTeam', actorId: 'admin', teamId: 't1', name: 'Other', description: '', memberIds: [], at }).thenThrows('TEAM_EXISTS', 'conflict');
    spec.given(team).when({ type: 'CreateTeam', actorId: 'admin', teamId: 't2', name: 'X', description: '', memberIds: ['stranger'], at }).thenThrows('TEAM_MEMBER_NOT_FOUND', 'invalid');
    spec.given(team).when({ type: 'CreateTeam', actorId: 'editor', teamId: 't2', name: 'X', description: '', memberIds: [], at }).thenThrows('FORBIDDEN', 'forbidden');
  });
});

describe('organization decider: LLM credentials', () => {
  it('sets (sealed) and removes a provider credential (manage_settings); removing an absent one is no event', () => {
    const set = spec.given(team).when({ type: 'SetLlmCredential', actorId: 'admin', provider: 'openai', sealedApiKey: 'v1.a.b.c', baseUrl: null, at }).events();
    expect(set).to.deep.equal([{ type: 'LlmCredentialSet', data: { provider: 'openai', sealedApiKey: 'v1.a.b.c', baseUrl: null, setBy: 'admin', at } }]);
    const withKey = [...team, ...set];
    expect(spec.stateOf(withKey).llmProviders).to.deep.equal(['openai']);
    expect(spec.given(withKey).when({ type: 'RemoveLlmCredential', actorId: 'admin', provider: 'openai', at }).events()[0].type).to.equal('LlmCredentialRemoved');
    spec.given(team).when({ type: 'RemoveLlmCredential', actorId: 'admin', provider: 'openai', at }).then([]);
    spec.given(team).when({ type: 'SetLlmCredential', actorId: 'editor', provider: 'openai', sealedApiKey: 'v1.a.b.c', baseUrl: null, at }).thenThrows('FORBIDDEN', 'forbidden');
    spec.given(team).when({ type: 'RemoveLlmCredential', actorId: 'viewer', provider: 'openai', at }).thenThrows('FORBIDDEN', 'forbidden');
  });

  it('refuses a plaintext key through the event schema', () => {
    expect(orgEventSchemas.LlmCredentialSet.safeParse({ provider: 'openai', sealedApiKey: 'sk-live-123', baseUrl: null, setBy: 'a', at }).success).to.equal(false);
  });
});
