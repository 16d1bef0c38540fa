import type { OrgEvent } from '../domain/orgs/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { UserEvent } from '../domain/users/index.js';
import type { ReadStore } from '../ports/read-store.js';
import { CREDENTIAL_COLLECTIONS, insertCredential, insertIfAbsent, revokeCredential, type ApiKeyAuthView, type UserAuthView } from './users-auth.js';
import type { Projector } from './projector.js';
import { userLlmCredentialsProjector } from './users-llm-credentials.js';

/** `users`: what the authenticator reads (UserAuthView) plus the profile. Never holds a password hash. */
export interface UserView extends UserAuthView {
  avatarUrl: string | null;
  /**
   * The preferences object as JSON text: any JSON object the API accepts (keys with `$` or `.`,
   * arrays in arrays) is then storable on every read-store adapter, FerretDB included.
   */
  preferencesJson: string;
  createdAt: string;
  updatedAt: string;
  /** No password set (social sign-in): password login always fails. */
  passwordless: boolean;
  emailVerified: boolean;
  accountVerified: boolean;
  /** Expired unverified and its email taken over: nothing signs in as it any more. */
  expired?: boolean;
  socialIdentities: Array<{ provider: string; subject: string }>;
  /** Stream revision of the last event applied: guards against a redelivered event. */
  version: number;
}

/** `user_passwords`: the scrypt hash, apart from the profile so no profile query can return it. */
export interface UserPasswordView {
  _id: string;
  passwordHash: string | null;
  version: number;
  [key: string]: unknown;
}

/** `api_keys`: what the authenticator reads (ApiKeyAuthView) plus what the owner sees in a list. */
export interface ApiKeyView extends ApiKeyAuthView {
  name: string;
  createdAt: string;
  prefix: string;
  lastFour: string;
}

export const USERS = CREDENTIAL_COLLECTIONS.users;
export const USER_PASSWORDS = 'user_passwords';
export const API_KEYS = CREDENTIAL_COLLECTIONS.apiKeys;

const userIdOf = (recorded: RecordedEvent) => recorded.streamId.slice('user-'.length);

async function projectUser(recorded: RecordedEvent, store: ReadStore): Promise<void> {
  const event = recorded as RecordedEvent & UserEvent;
  const id = userIdOf(recorded);
  const users = store.collection<UserView>(USERS);
  const passwords = store.collection<UserPasswordView>(USER_PASSWORDS);
  // Every later event is applied only over an older revision, so a redelivery changes nothing.
  const update = (set: Record<string, unknown>, push?: Record<string, unknown>) =>
    users.updateOne({ _id: id, version: { $lt: recorded.revision } }, { $set: { ...set, version: recorded.revision }, ...(push ? { $push: push } : {}) });
  switch (event.type) {
    case 'UserRegistered': {
      const d = event.data;
      // No flag: registered before verification existed, counted as verified.
      const verified = d.emailVerified ?? true;
      const doc: UserView = {
        _id: id,
        email: d.email,
        name: d.name,
        tokensValidAfter: 0,
        activeOrgId: null,
        activeWorkspaceId: null,
        avatarUrl: d.avatarUrl,
        preferencesJson: '{}',
        createdAt: d.registeredAt,
        updatedAt: d.registeredAt,
        passwordless: d.passwordHash === null,
        emailVerified: verified,
        accountVerified: verified,
        socialIdentities: [],
        version: recorded.revision,
      };
      await insertIfAbsent(passwords, { _id: id, passwordHash: d.passwordHash, version: recorded.revision });
      await insertIfAbsent(users, doc);
      return;
    }
    case 'UserProfileUpdated': {
      const { name, avatarUrl, preferences, updatedAt } = event.data;
      await update({
        ...(name !== undefined ? { name } : {}),
        ...(avatarUrl !== undefined ? { avatarUrl } : {}),
        ...(preferences !== undefined ? { preferencesJson: JSON.stringify(preferences) } : {}),
        updatedAt,
      });
      return;
    }
    case 'UserEmailChanged':
      await update({ email: event.data.email, updatedAt: event.data.changedAt });
      return;
    case 'PasswordResetCompleted':
      await passwords.updateOne({ _id: id, version: { $lt: recorded.revision } }, { $set: { passwordHash: event.data.passwordHash, version: recorded.revision } });
      await update({ tokensValidAfter: event.data.tokensValidAfter, passwordless: false, updatedAt: event.data.resetAt });
      return;
    case 'ActiveScopeSwitched':
      await update({ activeOrgId: event.data.orgId, activeWorkspaceId: event.data.workspaceId });
      return;
    case 'EmailVerificationRequested':
      await update({ emailVerified: false });
      return;
    case 'EmailVerified':
      await update({ emailVerified: true, accountVerified: true, updatedAt: event.data.verifiedAt });
      return;
    case 'UnverifiedAccountDisowned':
      // As an expiry (below): a start over handed the address to a new account.
      await passwords.updateOne({ _id: id, version: { $lt: recorded.revision } }, { $set: { passwordHash: null, version: recorded.revision } });
      await update({ email: `expired:${id}`, expired: true, tokensValidAfter: event.data.tokensValidAfter, updatedAt: event.data.disownedAt });
      return;
    case 'UnverifiedAccountExpired':
      // The email goes to the account that took it over (registered later in the log): the document
      // stays, as a tombstone a redelivered registration cannot recreate, under an address no one
      // can register (not an email), with no password, and refused by the authenticator.
      await passwords.updateOne({ _id: id, version: { $lt: recorded.revision } }, { $set: { passwordHash: null, version: recorded.revision } });
      await update({ email: `expired:${id}`, expired: true, tokensValidAfter: event.data.tokensValidAfter, updatedAt: event.data.expiredAt });
      return;
    case 'SocialIdentityLinked':
      await update({}, { socialIdentities: { provider: event.data.provider, subject: event.data.subject } });
      return;
    default:
      return;
  }
}

async function projectApiKey(recorded: RecordedEvent, store: ReadStore): Promise<void> {
  const event = recorded as RecordedEvent & UserEvent;
  const keys = store.collection<ApiKeyView>(API_KEYS);
  switch (event.type) {
    case 'ApiKeyCreated': {
      const d = event.data;
      await insertCredential(keys, {
        _id: d.keyId,
        userId: userIdOf(recorded),
        secretHash: d.secretHash,
        expiresAt: d.expiresAt,
        scopes: d.scopes,
        name: d.name,
        createdAt: d.createdAt,
        prefix: d.prefix,
        lastFour: d.lastFour,
      });
      return;
    }
    case 'ApiKeyRevoked':
      // api_keys documents carry no revision: the revocation is absolute.
      await revokeCredential(keys, event.data.keyId, event.data.revokedAt);
      return;
    default:
      return;
  }
}

/**
 * A deleted organization stops being anyone's active one: its members fall back to their personal
 * workspace, for login, API keys and CLI tokens alike; a deleted workspace's members move to the
 * organization's default workspace. Read from the `org-…` streams so that a
 * write settling on the organization's stream also settles this.
 */
async function projectOrganizationDeleted(recorded: RecordedEvent, store: ReadStore): Promise<void> {
  const event = recorded as RecordedEvent & OrgEvent;
  const orgId = recorded.streamId.slice('org-'.length);
  if (event.type === 'WorkspaceDeleted') {
    // Its members move to the default workspace the event names (issue 37). Events written before
    // the field existed leave the documents as they are: the authenticator and the profile resolve
    // a deleted workspace to the default when they read it (projections/users-auth.ts liveWorkspace).
    const fallback = event.data.fallbackWorkspaceId;
    if (fallback) await store.collection<UserView>(USERS).updateMany({ activeOrgId: orgId, activeWorkspaceId: event.data.workspaceId }, { $set: { activeWorkspaceId: fallback } });
    return;
  }
  if (event.type !== 'OrganizationDeleted') return;
  await store.collection<UserView>(USERS).updateMany({ activeOrgId: orgId }, { $set: { activeOrgId: null, activeWorkspaceId: null } });
}

/**
 * One projector for the three collections of the `user-…` streams: they advance together, so a
 * write settles on one checkpoint, and an API key is never visible before its user.
 */
const usersProjector: Projector = {
  name: 'users',
  categories: ['user', 'org'],
  collections: [USERS, USER_PASSWORDS, API_KEYS],
  async setup(store) {
    await store.collection(USERS).createIndex({ keys: { email: 1 }, unique: true, name: 'users_email_unique' });
    await store.collection(API_KEYS).createIndex({ keys: { userId: 1, createdAt: -1 } });
  },
  async project(recorded, store) {
    if (recorded.streamId.startsWith('org-')) return projectOrganizationDeleted(recorded, store);
    await projectUser(recorded, store);
    await projectApiKey(recorded, store);
  },
};

export const userProjectors: Projector[] = [usersProjector, userLlmCredentialsProjector];

export const findUserById = (store: ReadStore, userId: string) => store.collection<UserView>(USERS).findOne({ _id: userId });
/** `email` must already be normalized (lowercase, trimmed). */
export const findUserByEmail = (store: ReadStore, email: string) => store.collection<UserView>(USERS).findOne({ email });

/** The scrypt hash, or null for an unknown or passwordless user. Only the login path calls this. */
export async function findPasswordHash(store: ReadStore, userId: string): Promise<string | null> {
  const row = await store.collection<UserPasswordView>(USER_PASSWORDS).findOne({ _id: userId });
  return row?.passwordHash ?? null;
}

export const findApiKey = (store: ReadStore, keyId: string) => store.collection<ApiKeyView>(API_KEYS).findOne({ _id: keyId });

/** The user's keys that are not revoked (expired ones stay listed, with their expiry), newest first. */
export function listApiKeys(store: ReadStore, userId: string, limit: number, cursor: string | null) {
  return store.collection<ApiKeyView>(API_KEYS).page({ userId, revokedAt: null }, { sort: { createdAt: -1 }, limit, cursor });
}
