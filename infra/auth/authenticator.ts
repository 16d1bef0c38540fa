import { DomainError } from '../../domain/shared/decider.js';
import { roleAllows, type RequiredPermission, type Role } from '../../domain/shared/permissions.js';
import type { Authenticator as AuthenticatorPort, TokenIssuer } from '../../ports/auth.js';
import type { Clock } from '../../ports/clock.js';
import type { CredentialLookup, SecretCredentialView, UserAuthView } from '../../ports/credentials.js';
import { DEFAULT_UNVERIFIED_ACCOUNT_TTL_HOURS, unverifiedAccountExpired, unverifiedAccountExpiredError } from '../../domain/users/verification.js';
import { API_KEY_PREFIX, CLI_TOKEN_PREFIX, parseSecretCredential, type Principal } from '../../domain/shared/principal.js';
import { constantTimeEqual, sha256 } from '../../lib/digest.js';

const unauthenticated = (message = 'a valid bearer credential is required') => new DomainError('UNAUTHENTICATED', message, 'unauthenticated');

export interface AuthenticatorOptions {
  /** UNVERIFIED_ACCOUNT_TTL_HOURS: an account that never verified its email stops authenticating after this. */
  unverifiedAccountTtlHours?: number;
}

/** Turns an Authorization header into a Principal, and checks a permission for it. */
export class Authenticator implements AuthenticatorPort {
  private readonly unverifiedAccountTtlHours: number;

  constructor(
    private readonly tokens: TokenIssuer,
    private readonly credentials: CredentialLookup,
    private readonly clock: Clock,
    options: AuthenticatorOptions = {},
  ) {
    this.unverifiedAccountTtlHours = options.unverifiedAccountTtlHours ?? DEFAULT_UNVERIFIED_ACCOUNT_TTL_HOURS;
  }

  /** Every credential of an expired unverified account stops working, not only its password. */
  private checkNotExpired(user: UserAuthView) {
    const account = { verifiedOnce: user.accountVerified !== false, registeredAt: user.createdAt ?? null };
    if (user.expired) throw unverifiedAccountExpiredError('unauthenticated');
    if (unverifiedAccountExpired(account, this.clock.now().toISOString(), this.unverifiedAccountTtlHours)) throw unverifiedAccountExpiredError('unauthenticated');
  }

  /**
   * A scope naming a deleted organization is the personal workspace, and one naming a deleted
   * workspace is its organization's default workspace, whatever the credential still says.
   */
  private async liveScope(orgId: string | null, workspaceId: string | null): Promise<{ orgId: string | null; workspaceId: string | null }> {
    if (orgId === null) return { orgId, workspaceId };
    if (!(await this.credentials.organizationExists(orgId))) return { orgId: null, workspaceId: null };
    return { orgId, workspaceId: await this.credentials.liveWorkspace(orgId, workspaceId) };
  }

  async authenticate(header: string | undefined): Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match) throw unauthenticated();
    const credential = match[1];
    const apiKey = parseSecretCredential(API_KEY_PREFIX, credential);
    if (apiKey) return this.fromSecret('api_key', apiKey, await this.credentials.apiKey(apiKey.id));
    const cliToken = parseSecretCredential(CLI_TOKEN_PREFIX, credential);
    if (cliToken) return this.fromSecret('cli_token', cliToken, await this.credentials.cliToken(cliToken.id));

    const claims = await this.tokens.verify(credential);
    if (!claims) throw unauthenticated('the token is malformed, expired or not signed by us');
    const user = await this.credentials.user(claims.userId);
    if (!user || claims.issuedAt < user.tokensValidAfter) throw unauthenticated('the token is no longer valid');
    this.checkNotExpired(user);
    const scope = await this.liveScope(claims.orgId, claims.workspaceId);
    return { userId: claims.userId, ...scope, credential: 'jwt', credentialId: null, scopes: null };
  }

  private async fromSecret(
    kind: 'api_key' | 'cli_token',
    presented: { id: string; secret: string },
    stored: (SecretCredentialView & { scopes?: string[] }) | null,
  ): Promise<Principal> {
    // Hash even when nothing is stored, so an unknown id costs the same as a wrong secret.
    const presentedHash = sha256(presented.secret);
    const valid = stored !== null && constantTimeEqual(presentedHash, stored.secretHash);
    if (!valid || stored.revokedAt || (stored.expiresAt && Date.parse(stored.expiresAt) <= this.clock.now().getTime())) throw unauthenticated();
    const user = await this.credentials.user(stored.userId);
    if (!user) throw unauthenticated();
    this.checkNotExpired(user);
    return {
      userId: stored.userId,
      ...(await this.liveScope(user.activeOrgId, user.activeWorkspaceId)),
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
    const membership = await this.credentials.membership(scope, principal.userId);
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
