import type { Preferences, SocialProvider } from './fields.js';
import type { UserEvent } from './events.js';

export interface ApiKeyState {
  revokedAt: string | null;
  expiresAt: string | null;
}

export interface UserState {
  exists: boolean;
  userId: string | null;
  email: string | null;
  name: string | null;
  hasPassword: boolean;
  /** The scrypt hash, so that verifying an address can ask for the password (checked before the command, which gets the verdict). */
  passwordHash: string | null;
  avatarUrl: string | null;
  preferences: Preferences;
  activeOrgId: string | null;
  activeWorkspaceId: string | null;
  tokensValidAfter: number;
  registeredAt: string | null;
  /** The current address is proven (or the account predates verification: counted as proven). */
  emailVerified: boolean;
  /** Some address of this account was proven once: such an account never expires. */
  verifiedOnce: boolean;
  /** Only the newest verification request is valid; verifying clears it. */
  pendingVerification: { email: string; tokenHash: string; expiresAt: string } | null;
  /** Expired or disowned unverified, its email handed to a new account: it can no longer sign in. */
  expired: boolean;
  /** Only the newest reset request is valid; completing it clears it. */
  pendingReset: { tokenHash: string; expiresAt: string } | null;
  socialIdentities: Array<{ provider: SocialProvider; subject: string }>;
  apiKeys: Record<string, ApiKeyState>;
  /** Providers the user has an own LLM credential for. */
  llmProviders: string[];
}

export const initialUserState: UserState = {
  exists: false,
  userId: null,
  email: null,
  name: null,
  hasPassword: false,
  passwordHash: null,
  avatarUrl: null,
  preferences: {},
  activeOrgId: null,
  activeWorkspaceId: null,
  tokensValidAfter: 0,
  registeredAt: null,
  emailVerified: false,
  verifiedOnce: false,
  pendingVerification: null,
  expired: false,
  pendingReset: null,
  socialIdentities: [],
  apiKeys: {},
  llmProviders: [],
};

export function evolveUser(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserRegistered': {
      // Registered before verification existed (no flag): counted as verified, so it keeps working.
      const verified = event.data.emailVerified ?? true;
      return {
        ...initialUserState,
        exists: true,
        userId: event.data.userId,
        email: event.data.email,
        name: event.data.name,
        hasPassword: event.data.passwordHash !== null,
        passwordHash: event.data.passwordHash,
        avatarUrl: event.data.avatarUrl,
        registeredAt: event.data.registeredAt,
        emailVerified: verified,
        verifiedOnce: verified,
      };
    }
    case 'EmailVerificationRequested': {
      const { email, tokenHash, expiresAt } = event.data;
      return { ...state, emailVerified: false, pendingVerification: { email, tokenHash, expiresAt } };
    }
    case 'EmailVerified':
      return { ...state, emailVerified: true, verifiedOnce: true, pendingVerification: null };
    case 'UnverifiedAccountExpired':
    case 'UnverifiedAccountDisowned':
      return { ...state, expired: true, pendingVerification: null, pendingReset: null, tokensValidAfter: event.data.tokensValidAfter };
    case 'UserProfileUpdated': {
      const { name, avatarUrl, preferences } = event.data;
      return {
        ...state,
        ...(name !== undefined ? { name } : {}),
        ...(avatarUrl !== undefined ? { avatarUrl } : {}),
        ...(preferences !== undefined ? { preferences } : {}),
      };
    }
    case 'UserEmailChanged':
      return { ...state, email: event.data.email };
    case 'PasswordResetRequested':
      return { ...state, pendingReset: { tokenHash: event.data.tokenHash, expiresAt: event.data.expiresAt } };
    case 'PasswordResetCompleted':
      return { ...state, pendingReset: null, hasPassword: true, passwordHash: event.data.passwordHash, tokensValidAfter: event.data.tokensValidAfter };
    case 'ActiveScopeSwitched':
      return { ...state, activeOrgId: event.data.orgId, activeWorkspaceId: event.data.workspaceId };
    case 'SocialIdentityLinked':
      return { ...state, socialIdentities: [...state.socialIdentities, { provider: event.data.provider, subject: event.data.subject }] };
    case 'ApiKeyCreated':
      return { ...state, apiKeys: { ...state.apiKeys, [event.data.keyId]: { revokedAt: null, expiresAt: event.data.expiresAt } } };
    case 'ApiKeyRevoked': {
      const key = state.apiKeys[event.data.keyId];
      if (!key) return state;
      return { ...state, apiKeys: { ...state.apiKeys, [event.data.keyId]: { ...key, revokedAt: event.data.revokedAt } } };
    }
    case 'UserLlmCredentialSet':
      return state.llmProviders.includes(event.data.provider) ? state : { ...state, llmProviders: [...state.llmProviders, event.data.provider] };
    case 'UserLlmCredentialRemoved':
      return { ...state, llmProviders: state.llmProviders.filter((p) => p !== event.data.provider) };
    default:
      return state;
  }
}
