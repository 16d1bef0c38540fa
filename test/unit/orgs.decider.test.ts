import { expect } from 'chai';
import { DomainError, fold } from '../../domain/shared/decider.js';
import { orgDecider, orgEventSchemas, type OrgCommand, type OrgEvent } from '../../domain/orgs/index.js';
import type { Role } from '../../domain/shared/permissions.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const hash = (c: string) => c.repeat(64);

const given = (events: OrgEvent[]) => fold(orgDecider.evolve, orgDecider.initialState, events);
function when(events: OrgEvent[], command: OrgCommand) {
  const out = orgDecider.decide(command, given(events));
  // Whatever the decider emits must pass its own schemas (the command handler enforces it too).
  for (const e of out) expect(orgEventSchemas[e.type].safeParse(e.data).success, `${e.type} matches its schema`).to.equal(true);
  return out;
}
function expectRejected(fn: () => unknown, code: string, status?: number) {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code).to.equal(code);
    if (status) expect(httpStatusOf(err as DomainError)).to.equal(status);
    return;
  }
  expect.fail(`expected ${code}`);
}

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
    const state = given(created);
    expect(state.members.owner.role).to.equal('owner');
    expect(Object.keys(state.workspaces)).to.deep.equal(['w1']);
  });

  it('refuses to create it twice', () => {
    expectRejected(
      () => when(created, { type: 'CreateOrganization', orgId: 'o1', name: 'A', description: '', creator: { userId: 'u', email: null, name: null }, defaultWorkspaceId: 'w', at }),
      'ORGANIZATION_EXISTS',
      409,
    );
  });

  it('updates name, description and budget limit (manage_settings); nothing to change is no event', () => {
    const out = when(team, { type: 'UpdateOrganization', actorId: 'admin', name: 'New', budgetLimitUsd: 50, at });
    expect(out).to.deep.equal([{ type: 'OrganizationUpdated', data: { name: 'New', budgetLimitUsd: 50, updatedBy: 'admin', at } }]);
    expect(when(team, { type: 'UpdateOrganization', actorId: 'admin', budgetLimitUsd: null, at })[0].data).to.include({ budgetLimitUsd: null });
    expect(when(team, { type: 'UpdateOrganization', actorId: 'admin', at })).to.deep.equal([]);
    expectRejected(() => when(team, { type: 'UpdateOrganization', actorId: 'editor', name: 'X', at }), 'FORBIDDEN', 403);
    expectRejected(() => when(team, { type: 'UpdateOrganization', actorId: 'stranger', name: 'X', at }), 'ORGANIZATION_NOT_FOUND', 404);
  });

  it('deletes only for an owner, and a deleted organization accepts nothing more', () => {
    expect(when(team, { type: 'DeleteOrganization', actorId: 'owner', at })).to.deep.equal([deleted]);
    expectRejected(() => when(team, { type: 'DeleteOrganization', actorId: 'admin', at }), 'FORBIDDEN', 403);
    expectRejected(() => when([...team, deleted], { type: 'DeleteOrganization', actorId: 'owner', at }), 'ORGANIZATION_NOT_FOUND', 404);
    expectRejected(() => when([...team, deleted], { type: 'UpdateOrganization', actorId: 'owner', name: 'X', at }), 'ORGANIZATION_NOT_FOUND');
    expectRejected(() => when([], { type: 'UpdateOrganization', actorId: 'owner', name: 'X', at }), 'ORGANIZATION_NOT_FOUND');
  });
});

describe('organization decider: members', () => {
  it('changes a role (manage_members); the same role is no event', () => {
    expect(when(team, { type: 'ChangeMemberRole', actorId: 'admin', userId: 'viewer', role: 'editor', at })).to.deep.equal([
      { type: 'MemberRoleChanged', data: { userId: 'viewer', from: 'viewer', to: 'editor', changedBy: 'admin', at } },
    ]);
    expect(when(team, { type: 'ChangeMemberRole', actorId: 'admin', userId: 'viewer', role: 'viewer', at })).to.deep.equal([]);
    expectRejected(() => when(team, { type: 'ChangeMemberRole', actorId: 'editor', userId: 'viewer', role: 'editor', at }), 'FORBIDDEN', 403);
    expectRejected(() => when(team, { type: 'ChangeMemberRole', actorId: 'admin', userId: 'nobody', role: 'editor', at }), 'MEMBER_NOT_FOUND', 404);
  });

  it('lets only an owner grant or take away the owner role', () => {
    expectRejected(() => when(team, { type: 'ChangeMemberRole', actorId: 'admin', userId: 'editor', role: 'owner', at }), 'OWNER_ROLE_REQUIRED', 403);
    expectRejected(() => when(team, { type: 'ChangeMemberRole', actorId: 'admin', userId: 'owner', role: 'admin', at }), 'OWNER_ROLE_REQUIRED', 403);
    expect(when(team, { type: 'ChangeMemberRole', actorId: 'owner', userId: 'admin', role: 'owner', at })).to.have.length(1);
  });

  it('never demotes the last owner, but a second owner makes it possible', () => {
    expectRejected(() => when(team, { type: 'ChangeMemberRole', actorId: 'owner', userId: 'owner', role: 'admin', at }), 'LAST_OWNER', 409);
    const twoOwners = [...team, ...when(team, { type: 'ChangeMemberRole', actorId: 'owner', userId: 'admin', role: 'owner', at })];
    expect(when(twoOwners, { type: 'ChangeMemberRole', actorId: 'admin', userId: 'owner', role: 'viewer', at })).to.have.length(1);
  });

  it('removes a member (manage_members) and drops them from teams', () => {
    const teamCreated: OrgEvent = { type: 'TeamCreated', data: { teamId: 't1', name: 'T', description: '', memberIds: ['viewer', 'editor'], createdBy: 'admin', at } };
    const out = when([...team, teamCreated], { type: 'RemoveMember', actorId: 'admin', userId: 'viewer', at });
    expect(out).to.deep.equal([{ type: 'MemberRemoved', data: { userId: 'viewer', removedBy: 'admin', left: false, at } }]);
    const state = given([...team, teamCreated, ...out]);
    expect(state.members.viewer).to.equal(undefined);
    expect(state.teams.t1.memberIds).to.deep.equal(['editor']);
    expectRejected(() => when(team, { type: 'RemoveMember', actorId: 'editor', userId: 'viewer', at }), 'FORBIDDEN', 403);
    expectRejected(() => when(team, { type: 'RemoveMember', actorId: 'admin', userId: 'nobody', at }), 'MEMBER_NOT_FOUND', 404);
    expectRejected(() => when(team, { type: 'RemoveMember', actorId: 'stranger', userId: 'viewer', at }), 'ORGANIZATION_NOT_FOUND', 404);
  });

  it('lets any member leave, except the last owner', () => {
    expect(when(team, { type: 'RemoveMember', actorId: 'viewer', userId: 'viewer', at })[0].data).to.include({ left: true });
    expectRejected(() => when(team, { type: 'RemoveMember', actorId: 'owner', userId: 'owner', at }), 'LAST_OWNER', 409);
  });

  it('lets only an owner remove an owner', () => {
    const twoOwners = [...team, joined('owner2', 'owner')];
    expectRejected(() => when(twoOwners, { type: 'RemoveMember', actorId: 'admin', userId: 'owner2', at }), 'OWNER_ROLE_REQUIRED', 403);
    expect(when(twoOwners, { type: 'RemoveMember', actorId: 'owner', userId: 'owner2', at })).to.have.length(1);
  });
});

describe('organization decider: invitations', () => {
  const invite = (over: Partial<Extract<OrgCommand, { type: 'InviteMember' }>> = {}): OrgCommand => ({
    type: 'InviteMember', actorId: 'admin', invitationId: 'i1', email: 'New@X.test', role: 'editor', secretHash: hash('a'), expiresAt: later, at, ...over,
  });
  const invited = () => [...team, ...when(team, invite())];
  const accept = (over: Partial<Extract<OrgCommand, { type: 'AcceptInvitation' }>> = {}): OrgCommand => ({
    type: 'AcceptInvitation', invitationId: 'i1', secretHash: hash('a'), userId: 'newbie', email: 'new@x.TEST', name: 'N', at, ...over,
  });

  it('invites by email (lower-cased), storing only the secret hash', () => {
    expect(when(team, invite())).to.deep.equal([
      { type: 'InvitationCreated', data: { invitationId: 'i1', email: 'new@x.test', role: 'editor', secretHash: hash('a'), expiresAt: later, invitedBy: 'admin', at } },
    ]);
  });

  it('refuses inviting without manage_members, an owner by a non-owner, and an existing member', () => {
    expectRejected(() => when(team, invite({ actorId: 'editor' })), 'FORBIDDEN', 403);
    expectRejected(() => when(team, invite({ role: 'owner' })), 'OWNER_ROLE_REQUIRED', 403);
    expect(when(team, invite({ actorId: 'owner', role: 'owner' }))).to.have.length(1);
    expectRejected(() => when(team, invite({ email: 'VIEWER@x.test' })), 'ALREADY_A_MEMBER', 409);
    expectRejected(() => when(invited(), invite()), 'INVITATION_EXISTS', 409);
  });

  it('accepting makes the user a member with the invited role', () => {
    const out = when(invited(), accept());
    expect(out.map((e) => e.type)).to.deep.equal(['InvitationAccepted', 'MemberJoined']);
    expect(out[1].data).to.include({ userId: 'newbie', role: 'editor', via: 'invitation', invitationId: 'i1', email: 'new@x.test' });
    expect(given([...invited(), ...out]).members.newbie.role).to.equal('editor');
  });

  it('is single use', () => {
    const used = [...invited(), ...when(invited(), accept())];
    expectRejected(() => when(used, accept({ userId: 'other' })), 'INVITATION_ALREADY_USED', 409);
  });

  it('expires', () => {
    expectRejected(() => when(invited(), accept({ at: later })), 'INVITATION_EXPIRED', 410);
  });

  it('answers not found for an unknown invitation, a wrong secret or a deleted organization', () => {
    expectRejected(() => when(invited(), accept({ invitationId: 'nope' })), 'INVITATION_NOT_FOUND', 404);
    expectRejected(() => when(invited(), accept({ secretHash: hash('b') })), 'INVITATION_NOT_FOUND', 404);
    expectRejected(() => when([], accept()), 'INVITATION_NOT_FOUND', 404);
    expectRejected(() => when([...invited(), deleted], accept()), 'INVITATION_NOT_FOUND', 404);
  });

  it('only the invited address may accept, and not a member twice', () => {
    expectRejected(() => when(invited(), accept({ email: 'someone@else.test' })), 'INVITATION_EMAIL_MISMATCH', 403);
    expectRejected(() => when(invited(), accept({ userId: 'viewer' })), 'ALREADY_A_MEMBER', 409);
  });
});

describe('organization decider: workspaces and teams', () => {
  it('creates, renames and deletes workspaces (manage_workspaces)', () => {
    const createdWs = when(team, { type: 'CreateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'Research', description: 'r', at });
    expect(createdWs).to.deep.equal([{ type: 'WorkspaceCreated', data: { workspaceId: 'w2', name: 'Research', description: 'r', createdBy: 'admin', at } }]);
    const two = [...team, ...createdWs];
    expect(when(two, { type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'R&D', at })[0].data).to.include({ name: 'R&D' });
    expect(when(two, { type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'w2', at })).to.deep.equal([]);
    expect(when(two, { type: 'DeleteWorkspace', actorId: 'admin', workspaceId: 'w2', at })[0].type).to.equal('WorkspaceDeleted');
    expectRejected(() => when(two, { type: 'CreateWorkspace', actorId: 'editor', workspaceId: 'w3', name: 'X', description: '', at }), 'FORBIDDEN', 403);
    expectRejected(() => when(two, { type: 'UpdateWorkspace', actorId: 'viewer', workspaceId: 'w2', name: 'X', at }), 'FORBIDDEN', 403);
    expectRejected(() => when(two, { type: 'DeleteWorkspace', actorId: 'editor', workspaceId: 'w2', at }), 'FORBIDDEN', 403);
  });

  it('keeps workspace names unique (case-insensitive) and refuses unknown ids', () => {
    expectRejected(() => when(team, { type: 'CreateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'default', description: '', at }), 'WORKSPACE_NAME_TAKEN', 409);
    expectRejected(() => when(team, { type: 'CreateWorkspace', actorId: 'admin', workspaceId: 'w1', name: 'Other', description: '', at }), 'WORKSPACE_EXISTS', 409);
    const two = [...team, ...when(team, { type: 'CreateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'Two', description: '', at })];
    expectRejected(() => when(two, { type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'DEFAULT', at }), 'WORKSPACE_NAME_TAKEN', 409);
    expect(when(two, { type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'w2', name: 'two', at })).to.have.length(1);
    expectRejected(() => when(team, { type: 'UpdateWorkspace', actorId: 'admin', workspaceId: 'nope', name: 'X', at }), 'WORKSPACE_NOT_FOUND', 404);
    expectRejected(() => when(team, { type: 'DeleteWorkspace', actorId: 'admin', workspaceId: 'nope', at }), 'WORKSPACE_NOT_FOUND', 404);
  });

  it('never deletes the last workspace', () => {
    expectRejected(() => when(team, { type: 'DeleteWorkspace', actorId: 'owner', workspaceId: 'w1', at }), 'LAST_WORKSPACE', 409);
  });

  it('creates teams of members only (manage_teams), de-duplicating ids', () => {
    const out = when(team, { type: 'CreateTeam', actorId: 'admin', teamId: 't1', name: 'Core', description: '', memberIds: ['editor', 'viewer', 'editor'], at });
    expect(out).to.deep.equal([{ type: 'TeamCreated', data: { teamId: 't1', name: 'Core', description: '', memberIds: ['editor', 'viewer'], createdBy: 'admin', at } }]);
    const withTeam = [...team, ...out];
    expectRejected(() => when(withTeam, { type: 'CreateTeam', actorId: 'admin', teamId: 't2', name: 'CORE', description: '', memberIds: [], at }), 'TEAM_NAME_TAKEN', 409);
    expectRejected(() => when(withTeam, { type: 'CreateTeam', actorId: 'admin', teamId: 't1', name: 'Other', description: '', memberIds: [], at }), 'TEAM_EXISTS', 409);
    expectRejected(() => when(team, { type: 'CreateTeam', actorId: 'admin', teamId: 't2', name: 'X', description: '', memberIds: ['stranger'], at }), 'TEAM_MEMBER_NOT_FOUND', 400);
    expectRejected(() => when(team, { type: 'CreateTeam', actorId: 'editor', teamId: 't2', name: 'X', description: '', memberIds: [], at }), 'FORBIDDEN', 403);
  });
});

describe('organization decider: LLM credentials', () => {
  it('sets (sealed) and removes a provider credential (manage_settings); removing an absent one is no event', () => {
    const set = when(team, { type: 'SetLlmCredential', actorId: 'admin', provider: 'openai', sealedApiKey: 'v1.a.b.c', baseUrl: null, at });
    expect(set).to.deep.equal([{ type: 'LlmCredentialSet', data: { provider: 'openai', sealedApiKey: 'v1.a.b.c', baseUrl: null, setBy: 'admin', at } }]);
    const withKey = [...team, ...set];
    expect(given(withKey).llmProviders).to.deep.equal(['openai']);
    expect(when(withKey, { type: 'RemoveLlmCredential', actorId: 'admin', provider: 'openai', at })[0].type).to.equal('LlmCredentialRemoved');
    expect(when(team, { type: 'RemoveLlmCredential', actorId: 'admin', provider: 'openai', at })).to.deep.equal([]);
    expectRejected(() => when(team, { type: 'SetLlmCredential', actorId: 'editor', provider: 'openai', sealedApiKey: 'v1.a.b.c', baseUrl: null, at }), 'FORBIDDEN', 403);
    expectRejected(() => when(team, { type: 'RemoveLlmCredential', actorId: 'viewer', provider: 'openai', at }), 'FORBIDDEN', 403);
  });

  it('refuses a plaintext key through the event schema', () => {
    expect(orgEventSchemas.LlmCredentialSet.safeParse({ provider: 'openai', sealedApiKey: 'sk-live-123', baseUrl: null, setBy: 'a', at }).success).to.equal(false);
  });
});
