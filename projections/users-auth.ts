import type { ApiKeyAuthView, CredentialLookup, MembershipView, SecretCredentialView, UserAuthView } from '../ports/credentials.js';
import { DuplicateKeyError, type Doc, type DocumentCollection, type ReadStore } from '../ports/read-store.js';

export type { ApiKeyAuthView, MembershipView, SecretCredentialView, UserAuthView } from '../ports/credentials.js';

/**
 * The read models authentication consults on every request. Each collection is built by its own
 * context's projector (users and api_keys: projections/users.ts; cli_tokens: projections/cli.ts;
 * org_members and orgs: projections/orgs.ts); these are only the queries.
 */
export const CREDENTIAL_COLLECTIONS = { users: 'users', apiKeys: 'api_keys', cliTokens: 'cli_tokens', members: 'org_members', orgs: 'orgs', workspaces: 'workspaces' } as const;

export const findUserAuth = (store: ReadStore, userId: string) => store.collection<UserAuthView>(CREDENTIAL_COLLECTIONS.users).findOne({ _id: userId });
export const findApiKeyAuth = (store: ReadStore, keyId: string) => store.collection<ApiKeyAuthView>(CREDENTIAL_COLLECTIONS.apiKeys).findOne({ _id: keyId });
export const findCliTokenAuth = (store: ReadStore, tokenId: string) => store.collection<SecretCredentialView>(CREDENTIAL_COLLECTIONS.cliTokens).findOne({ _id: tokenId });
export const findMembership = (store: ReadStore, orgId: string, userId: string) =>
  store.collection<MembershipView>(CREDENTIAL_COLLECTIONS.members).findOne({ _id: `${orgId}:${userId}` });
/** The orgs projector deletes an organization's document when it is deleted. */
export const organizationExists = async (store: ReadStore, orgId: string) =>
  (await store.collection(CREDENTIAL_COLLECTIONS.orgs).findOne({ _id: orgId }, { projection: { _id: 1 } })) !== null;

/**
 * The workspace a scope naming `workspaceId` in `orgId` is in now: itself while it exists, else
 * the organization's first workspace (the default a deletion moves its members to; recomputed
 * here rather than read from the event, so events older than `fallbackWorkspaceId` land the same).
 */
export async function liveWorkspace(store: ReadStore, orgId: string, workspaceId: string | null): Promise<string | null> {
  const workspaces = store.collection<Doc & { orgId: string }>(CREDENTIAL_COLLECTIONS.workspaces);
  if (workspaceId !== null && (await workspaces.findOne({ _id: workspaceId, orgId }, { projection: { _id: 1 } }))) return workspaceId;
  const first = await workspaces.findOne({ orgId }, { sort: { createdAt: 1, _id: 1 }, projection: { _id: 1 } });
  return first ? first._id : null;
}

/** The CredentialLookup port over these queries. */
export function credentialLookup(store: ReadStore): CredentialLookup {
  return {
    user: (userId) => findUserAuth(store, userId),
    apiKey: (keyId) => findApiKeyAuth(store, keyId),
    cliToken: (tokenId) => findCliTokenAuth(store, tokenId),
    membership: (orgId, userId) => findMembership(store, orgId, userId),
    organizationExists: (orgId) => organizationExists(store, orgId),
    liveWorkspace: (orgId, workspaceId) => liveWorkspace(store, orgId, workspaceId),
  };
}

/**
 * Inserts a credential document unless one with its `_id` exists (a redelivered creation must not
 * reset a document changed since). Not `$setOnInsert`: FerretDB 1.24 drops its top-level null
 * fields. A duplicate on another key (a unique index) is a real inconsistency and is rethrown.
 */
export async function insertIfAbsent<T extends Doc>(collection: DocumentCollection<T>, doc: T): Promise<void> {
  try {
    await collection.insertOne(doc);
  } catch (err) {
    if (err instanceof DuplicateKeyError && (await collection.findOne({ _id: doc._id }))) return;
    throw err;
  }
}

/**
 * The creation of a secret credential (an API key of projections/users.ts, a CLI token of
 * projections/cli.ts): its document, not revoked, inserted unless a redelivery finds it there.
 */
export function insertCredential<T extends SecretCredentialView>(collection: DocumentCollection<T>, doc: Omit<T, 'revokedAt'>): Promise<void> {
  return insertIfAbsent(collection, { ...doc, revokedAt: null } as T);
}

/**
 * The revocation of a secret credential. Without `revision` the value is absolute (applying it twice
 * is the same as once); a collection whose documents carry the stream revision (`version`) passes
 * it, and the revocation is then applied only over an older one.
 */
export async function revokeCredential(collection: DocumentCollection<SecretCredentialView>, id: string, revokedAt: string, revision?: number): Promise<void> {
  if (revision === undefined) await collection.updateOne({ _id: id }, { $set: { revokedAt } });
  else await collection.updateOne({ _id: id, version: { $lt: revision } }, { $set: { revokedAt, version: revision } });
}
