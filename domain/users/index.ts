import { DomainError, type Decider } from '../shared/decider.js';
import { decideApiKey, type ApiKeyCommand } from './api-keys.js';
import { decideUserLlmCredential, type UserLlmCredentialCommand } from './llm-credentials.js';
import { userEventSchemas, type UserEvent } from './events.js';
import type { Preferences, SocialProvider } from './fields.js';
import { evolveUser, initialUserState, type UserState } from './state.js';

export * from './events.js';
export * from './fields.js';
export * from './state.js';
export { activeApiKeyCount, type ApiKeyCommand } from './api-keys.js';
export * from './llm-credentials.js';

/**
 * The user aggregate (`user-<id>`): account, profile, password reset, active scope, linked social
 * identities, API keys and own LLM provider credentials. Email uniqueness is not decided here: the command layer claims a
 * reservation stream first. Password hashing happens before the command (it is slow and random).
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
      at: string;
    }
  | { type: 'UpdateProfile'; name?: string; avatarUrl?: string | null; preferences?: Preferences; at: string }
  | { type: 'ChangeEmail'; email: string; at: string }
  | { type: 'RequestPasswordReset'; tokenHash: string; expiresAt: string; at: string }
  | { type: 'ResetPassword'; tokenHash: string; passwordHash: string; at: string }
  | { type: 'SwitchActiveScope'; orgId: string | null; workspaceId: string | null; at: string }
  | { type: 'LinkSocialIdentity'; provider: SocialProvider; subject: string; at: string }
  | ApiKeyCommand
  | UserLlmCredentialCommand;

export const userStreamId = (userId: string) => `user-${userId}`;

const userNotFound = () => new DomainError('USER_NOT_FOUND', 'user not found', 'not_found');
/** One code for unknown user, wrong secret and consumed token, so the answer says nothing about which. */
const invalidResetToken = () => new DomainError('INVALID_RESET_TOKEN', 'the reset token is invalid or has already been used', 'invalid', { field: 'body.token' });

/** Hashes are equal-length hex; comparing every character keeps the time independent of where they differ. */
function sameHash(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

function decide(command: UserCommand, state: UserState): UserEvent[] {
  if (command.type === 'RegisterUser') {
    if (state.exists) throw new DomainError('USER_EXISTS', 'this user already exists', 'conflict');
    const { userId, email, name, passwordHash, avatarUrl, socialIdentity, at } = command;
    const events: UserEvent[] = [{ type: 'UserRegistered', data: { userId, email, name, passwordHash, avatarUrl, registeredAt: at } }];
    if (socialIdentity) events.push({ type: 'SocialIdentityLinked', data: { ...socialIdentity, linkedAt: at } });
    return events;
  }
  if (command.type === 'ResetPassword') {
    const pending = state.pendingReset;
    if (!state.exists || !pending || !sameHash(pending.tokenHash, command.tokenHash)) throw invalidResetToken();
    if (Date.parse(pending.expiresAt) <= Date.parse(command.at)) {
      throw new DomainError('RESET_TOKEN_EXPIRED', 'the reset token has expired; request a new one', 'invalid', { field: 'body.token' });
    }
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
    case 'ChangeEmail':
      if (command.email === state.email) return [];
      return [{ type: 'UserEmailChanged', data: { previousEmail: state.email!, email: command.email, changedAt: command.at } }];
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

export const userDecider: Decider<UserCommand, UserState, UserEvent> = {
  initialState: initialUserState,
  eventSchemas: userEventSchemas,
  evolve: evolveUser,
  decide,
};
