import { DomainError } from '../../domain/shared/decider.js';
import { roleAllows, type RequiredPermission, type Role } from '../../domain/shared/permissions.js';
import { findApiKeyAuth, findCliTokenAuth, findMembership, findUserAuth, type SecretCredentialView } from '../../projections/users-auth.js';
import type { ReadStore } from '../ports/read-store.js';
import { API_KEY_PREFIX, CLI_TOKEN_PREFIX, parseSecretCredential, type Principal } from '../../domain/shared/principal.js';
import { constantTimeEqual, sha256 } from './secrets.js';
import type { TokenService } from './tokens.js';

const unauthenticated = (message = 'a valid bearer credential is required') => new DomainError('UNAUTHENTICATED', message, 'unauthenticated');

/** Turns an Authorization header into a Principal, and checks a permission for it. */
export class Authenticator {
  constructor(
    private readonly tokens: TokenService,
    private readonly store: ReadStore,
    private readonly now: () => Date,
  ) {}

  async authenticate(header: string | undefined): Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match) throw unauthenticated();
    const credential = match[1];
    const apiKey = parseSecretCredential(API_KEY_PREFIX, credential);
    if (apiKey) return this.fromSecret('api_key', apiKey, await findApiKeyAuth(this.store, apiKey.id));
    const cliToken = parseSecretCredential(CLI_TOKEN_PREFIX, credential);
    if (cliToken) return this.fromSecret('cli_token', cliToken, await findCliTokenAuth(this.store, cliToken.id));

    const claims = await this.tokens.verify(credential);
    if (!claims) throw unauthenticated('the token is malformed, expired or not signed by us');
    const user = await findUserAuth(this.store, claims.userId);
    if (!user || claims.issuedAt < user.tokensValidAfter) throw unauthenticated('the token is no longer valid');
    return { userId: claims.userId, orgId: claims.orgId, workspaceId: claims.workspaceId, credential: 'jwt', credentialId: null, scopes: null };
  }

  private async fromSecret(
    kind: 'api_key' | 'cli_token',
    presented: { id: string; secret: string },
    stored: (SecretCredentialView & { scopes?: string[] }) | null,
  ): Promise<Principal> {
    // Hash even when nothing is stored, so an unknown id costs the same as a wrong secret.
    const presentedHash = sha256(presented.secret);
    const valid = stored !== null && constantTimeEqual(presentedHash, stored.secretHash);
    if (!valid || stored.revokedAt || (stored.expiresAt && Date.parse(stored.expiresAt) <= this.now().getTime())) throw unauthenticated();
    const user = await findUserAuth(this.store, stored.userId);
    if (!user) throw unauthenticated();
    return {
      userId: stored.userId,
      orgId: user.activeOrgId,
      workspaceId: user.activeWorkspaceId,
      credential: kind,
      credentialId: stored._id,
      scopes: stored.scopes ?? null,
    };
  }

  /**
   * Checks `permission` in `orgId` (a path's organization) or else the active one. The personal
   * workspace (no organization) holds every permission over the user's own resources. An
   * organization the caller does not belong to answers 404, as if it did not exist.
   */
  async authorize(principal: Principal, permission: RequiredPermission, orgId?: string): Promise<Role | null> {
    if (principal.scopes && permission !== 'owner' && !principal.scopes.includes(permission)) {
      throw new DomainError('FORBIDDEN', `this API key's scopes do not include ${permission}`, 'forbidden');
    }
    const scope = orgId ?? principal.orgId;
    if (!scope) {
      if (permission === 'owner') throw new DomainError('FORBIDDEN', 'only an organization owner may do this', 'forbidden');
      return null;
    }
    const membership = await findMembership(this.store, scope, principal.userId);
    if (!membership) {
      if (orgId) throw new DomainError('ORGANIZATION_NOT_FOUND', 'organization not found', 'not_found');
      throw new DomainError('NOT_A_MEMBER', 'you are no longer a member of the active organization; switch organization', 'forbidden');
    }
    if (!roleAllows(membership.role, permission)) {
      throw new DomainError('FORBIDDEN', `your role (${membership.role}) does not grant ${permission}`, 'forbidden', { permission, role: membership.role });
    }
    return membership.role;
  }
}
