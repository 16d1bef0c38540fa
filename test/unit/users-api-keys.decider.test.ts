import { expect } from 'chai';
import { DomainError, fold } from '../../domain/shared/decider.js';
import { MAX_ACTIVE_API_KEYS, activeApiKeyCount, userDecider, type UserCommand, type UserEvent } from '../../domain/users/index.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-01-01T00:00:00.000Z';
const given = (events: UserEvent[]) => fold(userDecider.evolve, userDecider.initialState, events);
function when(events: UserEvent[], command: UserCommand): UserEvent[] {
  const produced = userDecider.decide(command, given(events));
  for (const e of produced) expect(userDecider.eventSchemas[e.type].safeParse(e.data).success, `${e.type} matches its schema`).to.equal(true);
  return produced;
}

function expectRejected(fn: () => unknown, code: string, status: number) {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code).to.equal(code);
    expect(httpStatusOf(err as DomainError)).to.equal(status);
    return;
  }
  expect.fail(`expected ${code}`);
}

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
    expect(when([registered], create('k1'))).to.deep.equal([created('k1')]);
    expect(given([registered, created('k1')]).apiKeys.k1).to.deep.equal({ revokedAt: null, expiresAt: null });
  });

  it('refuses a key for an unknown user, a reused id and a past expiry', () => {
    expectRejected(() => when([], create('k1')), 'USER_NOT_FOUND', 404);
    expectRejected(() => when([registered, created('k1')], create('k1')), 'API_KEY_EXISTS', 409);
    expectRejected(() => when([registered], create('k1', at)), 'INVALID_EXPIRY', 400);
    expect(when([registered], create('k1', '2027-01-01T00:00:00.000Z'))).to.have.length(1);
  });

  it(`allows ${MAX_ACTIVE_API_KEYS} active keys; revoked and expired ones do not count`, () => {
    const full = Array.from({ length: MAX_ACTIVE_API_KEYS }, (_, i) => created(`k${i}`));
    expect(activeApiKeyCount(given([registered, ...full]), at)).to.equal(MAX_ACTIVE_API_KEYS);
    expectRejected(() => when([registered, ...full], create('extra')), 'API_KEY_LIMIT_REACHED', 409);
    expect(when([registered, ...full, revoked('k0')], create('extra'))).to.have.length(1);
    const expiring = [...full.slice(1), created('short', '2026-01-01T00:00:01.000Z')];
    expect(when([registered, ...expiring], { ...create('extra'), at: '2026-01-01T00:00:02.000Z' })).to.have.length(1);
  });

  it('revokes a key once; an unknown key is 404', () => {
    expect(when([registered, created('k1')], { type: 'RevokeApiKey', keyId: 'k1', at })).to.deep.equal([revoked('k1')]);
    expectRejected(() => when([registered, created('k1'), revoked('k1')], { type: 'RevokeApiKey', keyId: 'k1', at }), 'API_KEY_NOT_FOUND', 404);
    expectRejected(() => when([registered], { type: 'RevokeApiKey', keyId: 'k1', at }), 'API_KEY_NOT_FOUND', 404);
    expectRejected(() => when([registered], { type: 'RevokeApiKey', keyId: '__proto__', at }), 'API_KEY_NOT_FOUND', 404);
    expectRejected(() => when([], { type: 'RevokeApiKey', keyId: 'k1', at }), 'USER_NOT_FOUND', 404);
  });
});
