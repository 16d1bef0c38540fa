import { LRUCache } from 'lru-cache';
import type { CredentialLookup, UserAuthView } from '../../ports/credentials.js';

/** The revision of the newest event of `user-<id>`, or null when the stream is empty. */
export type UserRevision = (userId: string) => Promise<number | null>;

const DEFAULT_MAX_ENTRIES = 10_000;

interface Versioned {
  /** Revision of the user stream the read model had applied when the entry was read. */
  version?: number;
}

/**
 * Credential lookups for a read store in another process (MongoDB): a request no longer waits on
 * the read store for the user it authenticates, once seen.
 *
 * An entry is used only while the newest event of its user's stream is the one its read-model
 * document was last updated from (the document's `version`). Everything the authenticator reads of
 * a user (tokensValidAfter, expiry, verification, active scope) comes from events of that stream,
 * so a hit answers exactly what a caught-up read model answers, never older than what the read
 * store itself would. A user whose stream ends with an event that does not touch the document (an
 * API key created, say) is read from the store every time, as before. Organization and workspace deletion
 * (`org-…` events) are checked by the authenticator on every request; API keys, CLI tokens and
 * memberships are not cached.
 */
export class CachedCredentialLookup implements CredentialLookup {
  /** Read with `peek`: the user read from the store longest ago goes first when it is full. */
  private readonly users: LRUCache<string, UserAuthView & Versioned>;

  constructor(
    private readonly inner: CredentialLookup,
    private readonly userRevision: UserRevision,
    maxEntries = DEFAULT_MAX_ENTRIES,
  ) {
    this.users = new LRUCache({ max: maxEntries });
  }

  async user(userId: string): Promise<UserAuthView | null> {
    const cached = this.users.peek(userId);
    if (cached && (await this.userRevision(userId)) === cached.version) return cached;
    const fresh = (await this.inner.user(userId)) as (UserAuthView & Versioned) | null;
    this.users.delete(userId);
    if (fresh && typeof fresh.version === 'number') this.users.set(userId, fresh);
    return fresh;
  }

  apiKey: CredentialLookup['apiKey'] = (keyId) => this.inner.apiKey(keyId);
  cliToken: CredentialLookup['cliToken'] = (tokenId) => this.inner.cliToken(tokenId);
  membership: CredentialLookup['membership'] = (orgId, userId) => this.inner.membership(orgId, userId);
  organizationExists: CredentialLookup['organizationExists'] = (orgId) => this.inner.organizationExists(orgId);
  liveWorkspace: CredentialLookup['liveWorkspace'] = (orgId, workspaceId) => this.inner.liveWorkspace(orgId, workspaceId);
}
