import { expect } from 'chai';
import { MAX_ACTIVE_API_KEYS, activeApiKeyCount, userDecider, type UserCommand, type UserEvent } from '../../domain/users/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const spec = deciderSpec(userDecider);

const registered: UserEvent = {
  type: 'UserRegistered',
  data: { userId: 'u1', email: 'a@example.com', name: 'Ann', passwordHash: 'scrypt$1$1$1$s$h', avatarUrl: null, registeredAt: at },
};
const create = (keyId: string, expiresAt: string | null = null): Extract<UserCommand, { type: 'CreateApiKey' }> => ({
  type: 'CreateApiKey',
  keyId,
  name: `key ${keyId}`,
  secretHash: 'f'.repeat(64),
  prefix: `fsk_${keyId}`,
  lastFour: 'abcd',
  scopes: ['view_resources'],
  expiresAt,
  at,
});
const created = (keyId: string, expiresAt: string | null = null): UserEvent => {
  const { type: _t, at: createdAt, ...data } = create(keyId, expiresAt);
  return { type: 'ApiKeyCreated', data: { ...data, createdAt } };
};
const revoked = (keyId: string): UserEvent => ({ type: 'ApiKeyRevoked', data: { keyId, revokedAt: at } });

describe('user decider: API keys', () => {
  it('creates a key, storing only what the command hashed', () => {
    spec.given([registered]).when(create('k1')).then([created('k1')]);
    expect(spec.stateOf([registered, created('k1')]).apiKeys.k1).to.deep.equal({ revokedAt: null, expiresAt: null });
  });

  it('refuses a key for an unknown user, a reused id and a past expiry', () => {
    spec.given([]).when(create('k1')).thenThrows('USER_NOT_FOUND', 'not_found');
    spec.given([registered, created('k1')]).when(create('k1')).thenThrows('API_KEY_EXISTS', 'conflict');
    spec.given([registered]).when(create('k1', at)).thenThrows('INVALID_EXPIRY', 'invalid');
    expect(spec.given([registered]).when(create('k1', '2027-01-01T00:00:00.000Z')).events()).to.have.length(1);
  });

  it(`allows ${MAX_ACTIVE_API_KEYS} active keys; revoked and expired ones do not count`, () => {
    const full = Array.from({ length: MAX_ACTIVE_API_KEYS }, (_, i) => created(`k${i}`));
    expect(activeApiKeyCount(spec.stateOf([registered, ...full]), at)).to.equal(MAX_ACTIVE_API_KEYS);
    spec.given([registered, ...full]).when(create('extra')).thenThrows('API_KEY_LIMIT_REACHED', 'conflict');
    expect(spec.given([registered, ...full, revoked('k0')]).when(create('extra')).events()).to.have.length(1);
    const expiring = [...full.slice(1), created('short', '2026-01-01T00:00:01.000Z')];
    expect(spec.given([registered, ...expiring]).when({ ...create('extra'), at: '2026-01-01T00:00:02.000Z' }).events()).to.have.length(1);
  });

  it('revokes a key once; an unknown key is 404', () => {
    spec.given([registered, created('k1')]).when({ type: 'RevokeApiKey', keyId: 'k1', at }).then([revoked('k1')]);
    spec.given([registered, created('k1'), revoked('k1')]).when({ type: 'RevokeApiKey', keyId: 'k1', at }).thenThrows('API_KEY_NOT_FOUND', 'not_found');
    spec.given([registered]).when({ type: 'RevokeApiKey', keyId: 'k1', at }).thenThrows('API_KEY_NOT_FOUND', 'not_found');
    spec.given([registered]).when({ type: 'RevokeApiKey', keyId: '__proto__', at }).thenThrows('API_KEY_NOT_FOUND', 'not_found');
    spec.given([]).when({ type: 'RevokeApiKey', keyId: 'k1', at }).thenThrows('USER_NOT_FOUND', 'not_found');
  });
});
