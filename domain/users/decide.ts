import { DomainError } from '../shared/decider.js';
import { decideApiKey, type ApiKeyCommand } from './api-keys.js';
import { decideUserLlmCredential, type UserLlmCredentialCommand } from './llm-credentials.js';
import type { UserEvent } from './events.js';
import type { Preferences, SocialProvider } from './fields.js';
import type { UserState } from './state.js';
import { accountEmailUnverified, decideEmailVerification, validPendingReset, verificationRequested, type EmailVerificationCommand, type VerificationRequest } from './verification.js';

/**
 * The user aggregate (`user-<id>`): account, profile, email ownership, password reset, active
 * scope, linked social identities, API keys and own LLM provider credentials. Email uniqueness is
 * not decided here: the command layer claims a reservation stream first. Password hashing and
 * token secrets happen before the command (they are slow or random).
 *
 * `verification` on RegisterUser and ChangeEmail: the mail about to be sent for the address, which
 * then counts as unverified until its token comes back. RegisterUser with `verification: null`
 * records an address proven elsewhere (a provider's verified email); left out, the event carries
 * no flag, as events written before verification existed.
 */
export type UserCommand =
  | {
      type: 'RegisterUser';
      userId: string;
      email: string;
      name: string;
      passwordHash: string | null;
      avatarUrl: string | null;
      socialIdentity: { provider: SocialProvider; subject: string } | null;
      verification?: VerificationRequest | null;
      at: string;
    }
  | { type: 'UpdateProfile'; name?: string; avatarUrl?: string | null; preferences?: Preferences; at: string }
  | { type: 'ChangeEmail'; email: string; verification?: VerificationRequest; at: string }
  | { type: 'RequestPasswordReset'; tokenHash: string; expiresAt: string; at: string }
  | { type: 'ResetPassword'; tokenHash: string; passwordHash: string; at: string }
  | { type: 'SwitchActiveScope'; orgId: string | null; workspaceId: string | null; at: string }
  | { type: 'LinkSocialIdentity'; provider: SocialProvider; subject: string; at: string }
  | EmailVerificationCommand
  | ApiKeyCommand
  | UserLlmCredentialCommand;

const userNotFound = () => new DomainError('USER_NOT_FOUND', 'user not found', 'not_found');

export function decideUser(command: UserCommand, state: UserState): UserEvent[] {
  if (command.type === 'RegisterUser') {
    if (state.exists) throw new DomainError('USER_EXISTS', 'this user already exists', 'conflict');
    const { userId, email, name, passwordHash, avatarUrl, socialIdentity, verification, at } = command;
    const flag = verification === undefined ? {} : { emailVerified: verification === null };
    const events: UserEvent[] = [{ type: 'UserRegistered', data: { userId, email, name, passwordHash, avatarUrl, registeredAt: at, ...flag } }];
    if (verification) events.push(verificationRequested(email, verification, at));
    if (socialIdentity) events.push({ type: 'SocialIdentityLinked', data: { ...socialIdentity, linkedAt: at } });
    return events;
  }
  if (command.type === 'VerifyEmail' || command.type === 'RequestEmailVerification' || command.type === 'ExpireUnverifiedAccount' || command.type === 'DisownUnverifiedAccount') {
    return decideEmailVerification(command, state);
  }
  if (command.type === 'ResetPassword') {
    validPendingReset(state, command.tokenHash, command.at);
    // A reset would hand the clicker an account someone else set up (its API keys, its org memberships): start over instead.
    if (!state.verifiedOnce) throw new DomainError('START_OVER_REQUIRED', 'this account never verified its email; the reset starts over (DisownUnverifiedAccount)', 'conflict');
    const tokensValidAfter = Math.max(state.tokensValidAfter, Math.floor(Date.parse(command.at) / 1000));
    return [{ type: 'PasswordResetCompleted', data: { tokenHash: command.tokenHash, passwordHash: command.passwordHash, tokensValidAfter, resetAt: command.at } }];
  }
  if (!state.exists) throw userNotFound();
  switch (command.type) {
    case 'UpdateProfile': {
      const changes: { name?: string; avatarUrl?: string | null; preferences?: Preferences } = {};
      if (command.name !== undefined && command.name !== state.name) changes.name = command.name;
      if (command.avatarUrl !== undefined && command.avatarUrl !== state.avatarUrl) changes.avatarUrl = command.avatarUrl;
      if (command.preferences !== undefined && JSON.stringify(command.preferences) !== JSON.stringify(state.preferences)) {
        changes.preferences = command.preferences;
      }
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'UserProfileUpdated', data: { ...changes, updatedAt: command.at } }];
    }
    case 'ChangeEmail': {
      if (command.email === state.email) return [];
      const changed: UserEvent = { type: 'UserEmailChanged', data: { previousEmail: state.email!, email: command.email, changedAt: command.at } };
      // The new address is unproven until its own mail comes back.
      return command.verification ? [changed, verificationRequested(command.email, command.verification, command.at)] : [changed];
    }
    case 'RequestPasswordReset':
      return [{ type: 'PasswordResetRequested', data: { tokenHash: command.tokenHash, expiresAt: command.expiresAt, requestedAt: command.at } }];
    case 'SwitchActiveScope':
      if (command.orgId === null && command.workspaceId !== null) {
        throw new DomainError('INVALID_SCOPE', 'a workspace needs its organization; the personal workspace has neither', 'invalid');
      }
      if (command.orgId === state.activeOrgId && command.workspaceId === state.activeWorkspaceId) return [];
      return [{ type: 'ActiveScopeSwitched', data: { orgId: command.orgId, workspaceId: command.workspaceId, switchedAt: command.at } }];
    case 'LinkSocialIdentity': {
      const sameProvider = state.socialIdentities.find((i) => i.provider === command.provider);
      if (sameProvider?.subject === command.subject) return [];
      if (sameProvider) {
        throw new DomainError('SOCIAL_PROVIDER_ALREADY_LINKED', `this account is already linked to another ${command.provider} account`, 'conflict');
      }
      // Linking by email on an address nobody proved would hand the account to whoever typed it first.
      if (!state.emailVerified) throw accountEmailUnverified();
      return [{ type: 'SocialIdentityLinked', data: { provider: command.provider, subject: command.subject, linkedAt: command.at } }];
    }
    case 'CreateApiKey':
    case 'RevokeApiKey':
      return decideApiKey(command, state);
    case 'SetUserLlmCredential':
    case 'RemoveUserLlmCredential':
      return decideUserLlmCredential(command, state);
  }
}
