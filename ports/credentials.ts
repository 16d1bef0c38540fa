import type { Role } from '../domain/shared/permissions.js';
import type { Doc } from './read-store.js';

/**
 * The read-side facts the authenticator needs on every request. Declared here, implemented by the
 * query functions of `projections/users-auth.ts`, wired in `app/container.ts`: the authenticator
 * never learns which collections hold them.
 */
export interface UserAuthView extends Doc {
  email: string;
  name: string;
  /** Epoch seconds: tokens issued before it are refused (set by a password change or reset). */
  tokensValidAfter: number;
  activeOrgId: string | null;
  activeWorkspaceId: string | null;
  createdAt?: string;
  /** The current address is proven; missing (documents projected before verification existed) counts as true. */
  emailVerified?: boolean;
  /** Some address was proven once; false with an old `createdAt` is an expired account. Missing counts as true. */
  accountVerified?: boolean;
  /** Expired unverified and its email taken over by another account. */
  expired?: boolean;
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

export interface CredentialLookup {
  user(userId: string): Promise<UserAuthView | null>;
  apiKey(keyId: string): Promise<ApiKeyAuthView | null>;
  cliToken(tokenId: string): Promise<SecretCredentialView | null>;
  membership(orgId: string, userId: string): Promise<MembershipView | null>;
  /** False once the organization is deleted: a credential still scoped to it falls back to the personal workspace. */
  organizationExists(orgId: string): Promise<boolean>;
  /**
   * `workspaceId` while it exists in `orgId`; once deleted (or null), the organization's default
   * workspace (its first), so a credential naming a deleted workspace lands where its members went.
   */
  liveWorkspace(orgId: string, workspaceId: string | null): Promise<string | null>;
}
