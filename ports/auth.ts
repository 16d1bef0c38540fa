import type { Principal } from '../domain/shared/principal.js';
import type { RequiredPermission, Role } from '../domain/shared/permissions.js';

export interface TokenClaims {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
  /** Issued-at, seconds: a password change invalidates tokens issued before it. */
  issuedAt: number;
}

export interface TokenSubject {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

/** Issues and checks the bearer JWTs (adapter: `infra/auth/tokens.ts`, jose, HS256). */
export interface TokenIssuer {
  readonly ttlSeconds: number;
  issue(subject: TokenSubject): Promise<{ token: string; expiresIn: number }>;
  /** Null for anything that is not a valid, unexpired token of ours. */
  verify(token: string): Promise<TokenClaims | null>;
}

/** Turns an Authorization header into a Principal, and checks a permission for it (adapter: `infra/auth/authenticator.ts`). */
export interface Authenticator {
  authenticate(header: string | undefined): Promise<Principal>;
  /** The caller's role in `orgId` (or the active organization); null in the personal workspace. */
  authorize(principal: Principal, permission: RequiredPermission, orgId?: string): Promise<Role | null>;
}
