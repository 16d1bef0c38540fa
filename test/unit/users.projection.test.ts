import { expect } from 'chai';
import type { UserEvent } from '../../domain/users/index.js';
import { credentialLookup } from '../../projections/users-auth.js';
import { API_KEYS, USERS, USER_PASSWORDS, findPasswordHash, findUserByEmail, listApiKeys, userProjectors } from '../../projections/users.js';
import { projectionSpec, type GivenEvent } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const pw = 'scrypt$16384$8$1$salt$hash';
const newPw = 'scrypt$16384$8$1$salt$other';
const hash = (c: string) => c.repeat(64);
const ofUser = (userId: string, event: UserEvent): GivenEvent => ({ streamId: `user-${userId}`, event, actorId: userId });

const registered = (userId: string, email: string, passwordHash: string | null = pw): GivenEvent =>
  ofUser(userId, { type: 'UserRegistered', data: { userId, email, name: 'Ann', passwordHash, avatarUrl: null, registeredAt: at } });
const keyCreated = (userId: string, keyId: string, createdAt: string, expiresAt: string | null = null): GivenEvent =>
  ofUser(userId, {
    type: 'ApiKeyCreated',
    data: { keyId, name: `key ${keyId}`, secretHash: hash('f'), prefix: `fsk_${keyId}`, lastFour: 'abcd', scopes: ['view_resources'], expiresAt, createdAt },
  });

describe('users projector (users, user_passwords, api_keys)', () => {
  it('builds the profile and the authenticator\'s view, and never puts the password hash in it', async () => {
    await projectionSpec(userProjectors)
      .given([
        registered('u1', 'a@example.com'),
        ofUser('u1', { type: 'UserProfileUpdated', data: { name: 'Bo', avatarUrl: 'https://x.test/a.png', preferences: { theme: 'dark', $odd: { 'dotted.key': [[1]] } }, updatedAt: later } }),
        ofUser('u1', { type: 'UserEmailChanged', data: { previousEmail: 'a@example.com', email: 'b@example.com', changedAt: later } }),
        ofUser('u1', { type: 'ActiveScopeSwitched', data: { orgId: 'o1', workspaceId: 'w1', switchedAt: later } }),
        ofUser('u1', { type: 'SocialIdentityLinked', data: { provider: 'github', subject: '42', linkedAt: later } }),
      ])
      .then(async (store) => {
        const [user] = await store.collection(USERS).find({}, { sort: { _id: 1 }, limit: 10 });
        expect(user).to.deep.include({
          _id: 'u1', email: 'b@example.com', name: 'Bo', avatarUrl: 'https://x.test/a.png', activeOrgId: 'o1', activeWorkspaceId: 'w1',
          tokensValidAfter: 0, passwordless: false, createdAt: at, updatedAt: later, version: 4,
        });
        expect(JSON.parse(user.preferencesJson as string)).to.deep.equal({ theme: 'dark', $odd: { 'dotted.key': [[1]] } });
        expect(user.socialIdentities).to.deep.equal([{ provider: 'github', subject: '42' }]);
        expect(JSON.stringify(user), 'no password hash in the profile').to.not.include('scrypt$');
        expect(await credentialLookup(store).user('u1')).to.include({ _id: 'u1', email: 'b@example.com', tokensValidAfter: 0, activeOrgId: 'o1', activeWorkspaceId: 'w1' });
        expect(await credentialLookup(store).user('nobody')).to.equal(null);
        expect((await findUserByEmail(store, 'b@example.com'))?._id).to.equal('u1');
        expect(await findUserByEmail(store, 'a@example.com')).to.equal(null);
        expect(await findPasswordHash(store, 'u1')).to.equal(pw);
      });
  });

  it('a password reset replaces the hash, sets tokensValidAfter and gives a passwordless account a password', async () => {
    await projectionSpec(userProjectors)
      .given([
        registered('u2', 'social@example.com', null),
        ofUser('u2', { type: 'PasswordResetRequested', data: { tokenHash: hash('a'), expiresAt: later, requestedAt: at } }),
        ofUser('u2', { type: 'PasswordResetCompleted', data: { tokenHash: hash('a'), passwordHash: newPw, tokensValidAfter: 1_767_225_700, resetAt: later } }),
      ])
      .then(async (store) => {
        expect(await store.collection(USERS).findOne({ _id: 'u2' })).to.deep.include({ passwordless: false, tokensValidAfter: 1_767_225_700, updatedAt: later, version: 2 });
        expect(await findPasswordHash(store, 'u2')).to.equal(newPw);
        expect(await store.collection(USER_PASSWORDS).findOne({ _id: 'u2' })).to.deep.include({ passwordHash: newPw, version: 2 });
      });
  });

  it('keeps a passwordless account without a password hash', async () => {
    await projectionSpec(userProjectors)
      .given([registered('u3', 'c@example.com', null)])
      .thenDocuments(USER_PASSWORDS, [{ _id: 'u3', passwordHash: null, version: 0 }]);
  });

  it('api_keys: the authenticator\'s shape, listed newest first without revoked ones, revocation absolute', async () => {
    await projectionSpec(userProjectors)
      .given([
        registered('u1', 'a@example.com'),
        keyCreated('u1', 'k1', '2026-01-01T00:00:01.000Z'),
        keyCreated('u1', 'k2', '2026-01-01T00:00:02.000Z', '2027-01-01T00:00:00.000Z'),
        keyCreated('u1', 'k3', '2026-01-01T00:00:03.000Z'),
        ofUser('u1', { type: 'ApiKeyRevoked', data: { keyId: 'k3', revokedAt: later } }),
        registered('u9', 'z@example.com'),
        keyCreated('u9', 'k9', '2026-01-01T00:00:09.000Z'),
      ])
      .then(async (store) => {
        const lookup = credentialLookup(store);
        expect(await lookup.apiKey('k2')).to.deep.include({
          _id: 'k2', userId: 'u1', secretHash: hash('f'), revokedAt: null, expiresAt: '2027-01-01T00:00:00.000Z', scopes: ['view_resources'],
          name: 'key k2', prefix: 'fsk_k2', lastFour: 'abcd', createdAt: '2026-01-01T00:00:02.000Z',
        });
        expect(await lookup.apiKey('k3')).to.deep.include({ revokedAt: later });
        expect(await lookup.apiKey('nope')).to.equal(null);
        const page = await listApiKeys(store, 'u1', 10, null);
        expect(page.items.map((k) => k._id)).to.deep.equal(['k2', 'k1']);
        expect(page.nextCursor).to.equal(null);
        expect((await listApiKeys(store, 'u9', 10, null)).items.map((k) => k._id)).to.deep.equal(['k9']);
        expect(await store.collection(API_KEYS).find({}, { sort: { _id: 1 }, limit: 10 })).to.have.length(4);
      });
  });

  it('membership and CLI tokens are not this projector\'s: the lookup answers null for them here', async () => {
    await projectionSpec(userProjectors)
      .given([registered('u1', 'a@example.com')])
      .then(async (store) => {
        expect(await credentialLookup(store).membership('o1', 'u1')).to.equal(null);
        expect(await credentialLookup(store).cliToken('t1')).to.equal(null);
      });
  });

  it('email ownership: unverified on sign-up and on a changed address, verified by the token; legacy accounts verified', async () => {
    const signedUp = (userId: string, email: string): GivenEvent[] => [
      ofUser(userId, { type: 'UserRegistered', data: { userId, email, name: 'Ann', passwordHash: pw, avatarUrl: null, registeredAt: at, emailVerified: false } }),
      ofUser(userId, { type: 'EmailVerificationRequested', data: { email, tokenHash: hash('a'), expiresAt: later, requestedAt: at } }),
    ];
    await projectionSpec(userProjectors)
      .given([
        ...signedUp('u1', 'a@example.com'),
        ...signedUp('u2', 'b@example.com'),
        ofUser('u2', { type: 'EmailVerified', data: { email: 'b@example.com', tokenHash: hash('a'), verifiedAt: later } }),
        registered('u3', 'c@example.com'),
        ofUser('u3', { type: 'UserEmailChanged', data: { previousEmail: 'c@example.com', email: 'd@example.com', changedAt: later } }),
        ofUser('u3', { type: 'EmailVerificationRequested', data: { email: 'd@example.com', tokenHash: hash('b'), expiresAt: later, requestedAt: later } }),
        registered('u4', 'e@example.com'),
      ])
      .then(async (store) => {
        const lookup = credentialLookup(store);
        expect(await lookup.user('u1')).to.include({ emailVerified: false, accountVerified: false, createdAt: at, updatedAt: at });
        expect(await lookup.user('u2')).to.include({ emailVerified: true, accountVerified: true, updatedAt: later });
        expect(await lookup.user('u3')).to.include({ email: 'd@example.com', emailVerified: false, accountVerified: true });
        expect(await lookup.user('u4')).to.include({ emailVerified: true, accountVerified: true });
      });
  });

  it('an expired unverified account keeps a tombstone without email or password, and its email can be projected for the account that took it over', async () => {
    await projectionSpec(userProjectors)
      .given([
        ofUser('u1', { type: 'UserRegistered', data: { userId: 'u1', email: 'a@example.com', name: 'Ann', passwordHash: pw, avatarUrl: null, registeredAt: at, emailVerified: false } }),
        ofUser('u1', { type: 'UnverifiedAccountExpired', data: { email: 'a@example.com', tokensValidAfter: 1, expiredAt: later } }),
        registered('u2', 'a@example.com'),
      ])
      .then(async (store) => {
        expect(await credentialLookup(store).user('u1')).to.include({ email: 'expired:u1', expired: true, tokensValidAfter: 1 });
        expect(await findPasswordHash(store, 'u1')).to.equal(null);
        expect((await findUserByEmail(store, 'a@example.com'))?._id).to.equal('u2');
      });
  });

  it('a deleted organization stops being its members\' active one; other organizations stay', async () => {
    const switched = (userId: string, orgId: string): GivenEvent =>
      ofUser(userId, { type: 'ActiveScopeSwitched', data: { orgId, workspaceId: `${orgId}-ws`, switchedAt: later } });
    await projectionSpec(userProjectors)
      .given([
        registered('u1', 'a@example.com'),
        registered('u2', 'b@example.com'),
        registered('u3', 'c@example.com'),
        switched('u1', 'o1'),
        switched('u2', 'o1'),
        switched('u3', 'o2'),
        { streamId: 'org-o1', event: { type: 'OrganizationDeleted', data: { deletedBy: 'u1', at: later } }, actorId: 'u1' },
      ])
      .then(async (store) => {
        const lookup = credentialLookup(store);
        for (const id of ['u1', 'u2']) expect(await lookup.user(id)).to.include({ activeOrgId: null, activeWorkspaceId: null });
        expect(await lookup.user('u3')).to.include({ activeOrgId: 'o2', activeWorkspaceId: 'o2-ws' });
      });
  });
});
