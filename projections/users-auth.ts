import type { Doc, ReadStore } from '../infra/ports/read-store.js';
import type { Role } from '../domain/shared/permissions.js';

/**
 * The read models authentication consults on every request, and their shapes. Each collection is
 * built by its own context's projector (users and api_keys: projections/users.ts; cli_tokens:
 * projections/cli.ts; org_members and orgs: projections/orgs.ts); these are only the queries.
 */
export interface UserAuthView extends Doc {
  email: string;
  name: string;
  /** Epoch seconds: tokens issued before it are refused (set by a password change or reset). */
  tokensValidAfter: number;
  activeOrgId: string | null;
  activeWorkspaceId: string | null;
}

export interface SecretCredentialView extends Doc {
  userId: string;
  /** SHA-256 hex of the secret part. */
  secretHash: string;
  revokedAt: string | null;
  expiresAt: string | null;
}

export interface ApiKeyAuthView extends SecretCredentialView {
  scopes: string[];
}

export interface MembershipView extends Doc {
  /** `${orgId}:${userId}` */
  orgId: string;
  userId: string;
  role: Role;
}

export const CREDENTIAL_COLLECTIONS = { users: 'users', apiKeys: 'api_keys', cliTokens: 'cli_tokens', members: 'org_members' } as const;

export const findUserAuth = (store: ReadStore, userId: string) => store.collection<UserAuthView>(CREDENTIAL_COLLECTIONS.users).findOne({ _id: userId });
export const findApiKeyAuth = (store: ReadStore, keyId: string) => store.collection<ApiKeyAuthView>(CREDENTIAL_COLLECTIONS.apiKeys).findOne({ _id: keyId });
export const findCliTokenAuth = (store: ReadStore, tokenId: string) => store.collection<SecretCredentialView>(CREDENTIAL_COLLECTIONS.cliTokens).findOne({ _id: tokenId });
export const findMembership = (store: ReadStore, orgId: string, userId: string) =>
  store.collection<MembershipView>(CREDENTIAL_COLLECTIONS.members).findOne({ _id: `${orgId}:${userId}` });
