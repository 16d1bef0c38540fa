import { DomainError } from '../shared/decider.js';
import type { OrgCommand } from './commands.js';
import type { OrgEvent } from './events.js';
import { digestsEqual, ownerRoleRequired, requireLive, requirePermission } from './guards.js';
import { ownerCount, type OrgState } from './state.js';

type Cmd<T extends OrgCommand['type']> = Extract<OrgCommand, { type: T }>;

const memberNotFound = () => new DomainError('MEMBER_NOT_FOUND', 'member not found', 'not_found');
const lastOwner = () => new DomainError('LAST_OWNER', 'an organization needs at least one owner; make someone else owner first', 'conflict');
const invitationNotFound = () => new DomainError('INVITATION_NOT_FOUND', 'invitation not found', 'not_found');

export function changeMemberRole(command: Cmd<'ChangeMemberRole'>, state: OrgState): OrgEvent[] {
  const actorRole = requirePermission(state, command.actorId, 'manage_members');
  const target = state.members[command.userId];
  if (!target) throw memberNotFound();
  if ((command.role === 'owner' || target.role === 'owner') && actorRole !== 'owner') throw ownerRoleRequired('grant or take away the owner role');
  if (target.role === command.role) return [];
  if (target.role === 'owner' && ownerCount(state) === 1) throw lastOwner();
  return [{ type: 'MemberRoleChanged', data: { userId: command.userId, from: target.role, to: command.role, changedBy: command.actorId, at: command.at } }];
}

export function removeMember(command: Cmd<'RemoveMember'>, state: OrgState): OrgEvent[] {
  const leaving = command.userId === command.actorId;
  const actorRole = leaving ? requirePermission(state, command.actorId, 'view_resources') : requirePermission(state, command.actorId, 'manage_members');
  const target = state.members[command.userId];
  if (!target) throw memberNotFound();
  if (target.role === 'owner' && actorRole !== 'owner') throw ownerRoleRequired('remove an owner');
  if (target.role === 'owner' && ownerCount(state) === 1) throw lastOwner();
  return [{ type: 'MemberRemoved', data: { userId: command.userId, removedBy: command.actorId, left: leaving, at: command.at } }];
}

export function inviteMember(command: Cmd<'InviteMember'>, state: OrgState): OrgEvent[] {
  const actorRole = requirePermission(state, command.actorId, 'manage_members');
  if (command.role === 'owner' && actorRole !== 'owner') throw ownerRoleRequired('invite an owner');
  const email = command.email.toLowerCase();
  if (Object.values(state.members).some((m) => m.email?.toLowerCase() === email)) {
    throw new DomainError('ALREADY_A_MEMBER', 'someone with this email is already a member', 'conflict', { field: 'body.email' });
  }
  if (state.invitations[command.invitationId]) throw new DomainError('INVITATION_EXISTS', 'invitation id already used', 'conflict');
  const { invitationId, role, secretHash, expiresAt, actorId, at } = command;
  return [{ type: 'InvitationCreated', data: { invitationId, email, role, secretHash, expiresAt, invitedBy: actorId, at } }];
}

/**
 * Whoever holds the token and signs in with the invited address joins. The order of the checks
 * matters: nothing but "not found" is said before the secret matched, so a guessed id reveals nothing.
 */
export function acceptInvitation(command: Cmd<'AcceptInvitation'>, state: OrgState): OrgEvent[] {
  try {
    requireLive(state);
  } catch {
    throw invitationNotFound();
  }
  const invitation = state.invitations[command.invitationId];
  // Compare against a dummy digest when there is no invitation, so both paths cost the same.
  const matches = digestsEqual(invitation?.secretHash ?? '0'.repeat(64), command.secretHash);
  if (!invitation || !matches) throw invitationNotFound();
  if (invitation.acceptedBy) throw new DomainError('INVITATION_ALREADY_USED', 'this invitation was already accepted', 'conflict');
  if (Date.parse(invitation.expiresAt) <= Date.parse(command.at)) throw new DomainError('INVITATION_EXPIRED', 'this invitation has expired; ask for a new one', 'gone');
  if (invitation.email !== command.email.toLowerCase()) {
    throw new DomainError('INVITATION_EMAIL_MISMATCH', 'this invitation was sent to another email address; sign in with that account', 'forbidden');
  }
  if (state.members[command.userId]) throw new DomainError('ALREADY_A_MEMBER', 'you are already a member of this organization', 'conflict');
  return [
    { type: 'InvitationAccepted', data: { invitationId: command.invitationId, userId: command.userId, at: command.at } },
    {
      type: 'MemberJoined',
      data: { userId: command.userId, role: invitation.role, email: invitation.email, name: command.name, via: 'invitation', invitationId: command.invitationId, at: command.at },
    },
  ];
}
