import { DomainError } from '../domain/shared/decider.js';
import type { Role } from '../domain/shared/permissions.js';
import { formatInvitationToken, parseInvitationToken } from '../domain/orgs/invitation-token.js';
import type { EventStore } from '../ports/event-store.js';
import type { Mailer } from '../ports/mailer.js';
import type { CommandContext } from './handle.js';
import { handleOrgCommand } from './orgs-handle.js';
import { randomSecret, sha256 } from './users-credentials.js';

export interface InvitationDelivery {
  mailer: Mailer;
  frontendUrl: string;
  ttlHours: number;
  organizationName: string;
}

/**
 * Records the invitation (with the secret's hash only), then mails the token. The token exists
 * nowhere else: a failed mail leaves an invitation nobody can accept, which simply expires.
 */
export async function inviteMember(
  store: EventStore,
  context: CommandContext,
  orgId: string,
  actorId: string,
  input: { invitationId: string; email: string; role: Role },
  delivery: InvitationDelivery,
) {
  const secret = randomSecret();
  const expiresAt = new Date(context.now.getTime() + delivery.ttlHours * 3600_000).toISOString();
  const email = input.email.toLowerCase();
  const result = await handleOrgCommand(store, { ...context, orgId }, orgId, {
    type: 'InviteMember',
    actorId,
    invitationId: input.invitationId,
    email,
    role: input.role,
    secretHash: sha256(secret),
    expiresAt,
  });
  const token = formatInvitationToken(orgId, input.invitationId, secret);
  const link = `${delivery.frontendUrl.replace(/\/+$/, '')}/invitations/${encodeURIComponent(token)}`;
  const mail = {
    to: email,
    subject: `You are invited to join ${delivery.organizationName}`,
    text: [
      `You have been invited to join the organization "${delivery.organizationName}" as ${input.role}.`,
      `Accept the invitation here (it expires at ${expiresAt}, and works once):`,
      link,
      '',
      'Sign in with this email address to accept it. If you did not expect this mail, ignore it.',
    ].join('\n'),
  };
  try {
    await delivery.mailer.send(mail);
  } catch {
    throw new DomainError('MAIL_DELIVERY_FAILED', 'the invitation was recorded but its mail could not be sent; invite again', 'upstream', { invitationId: input.invitationId });
  }
  return { result, invitation: { id: input.invitationId, email, role: input.role, expiresAt, status: 'pending' as const } };
}

/** A token that is not even shaped like one is answered exactly like a wrong one. */
export async function acceptInvitation(
  store: EventStore,
  context: CommandContext,
  token: string,
  user: { userId: string; email: string; name: string | null },
) {
  const parsed = parseInvitationToken(token);
  if (!parsed) throw new DomainError('INVITATION_NOT_FOUND', 'invitation not found', 'not_found');
  const result = await handleOrgCommand(store, { ...context, orgId: parsed.orgId }, parsed.orgId, {
    type: 'AcceptInvitation',
    invitationId: parsed.invitationId,
    secretHash: sha256(parsed.secret),
    userId: user.userId,
    email: user.email,
    name: user.name,
  });
  return { result, orgId: parsed.orgId, invitationId: parsed.invitationId };
}
