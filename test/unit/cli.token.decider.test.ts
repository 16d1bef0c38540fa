import { expect } from 'chai';
import { cliTokenDecider, cliTokenEventSchemas, type CliTokenCommand, type CliTokenEvent } from '../../domain/cli/index.js';
import { DomainError, fold } from '../../domain/shared/decider.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-03-01T00:00:00.000Z';
const given = (events: CliTokenEvent[]) => fold(cliTokenDecider.evolve, cliTokenDecider.initialState, events);
const when = (events: CliTokenEvent[], command: CliTokenCommand) => cliTokenDecider.decide(command, given(events));

const create: CliTokenCommand = {
  type: 'CreateCliToken',
  tokenId: 't1',
  userId: 'u1',
  name: 'laptop',
  secretHash: 'c'.repeat(64),
  source: 'manual',
  deviceId: null,
  at,
  expiresAt: later,
};
const created: CliTokenEvent = {
  type: 'CliTokenCreated',
  data: { tokenId: 't1', userId: 'u1', name: 'laptop', secretHash: 'c'.repeat(64), source: 'manual', deviceId: null, createdAt: at, expiresAt: later },
};
const revoked: CliTokenEvent = { type: 'CliTokenRevoked', data: { tokenId: 't1', revokedBy: 'u1', revokedAt: later } };

function expectRejected(fn: () => unknown, code: string, status: number) {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect([(err as DomainError).code, httpStatusOf(err as DomainError)]).to.deep.equal([code, status]);
    return;
  }
  expect.fail(`expected ${code}`);
}

describe('CLI token decider', () => {
  it('creates a token once, hash only, with a schema-valid event', () => {
    expect(when([], create)).to.deep.equal([created]);
    expect(cliTokenEventSchemas.CliTokenCreated.safeParse(created.data).success).to.equal(true);
    expect(cliTokenEventSchemas.CliTokenCreated.safeParse({ ...created.data, secretHash: 'plain-secret' }).success, 'a clear secret is refused').to.equal(false);
    expectRejected(() => when([created], create), 'CLI_TOKEN_EXISTS', 409);
  });

  it('creates device tokens with their device id', () => {
    const [event] = when([], { ...create, source: 'device', deviceId: 'd1' });
    expect(event.data).to.include({ source: 'device', deviceId: 'd1' });
  });

  it('refuses a token that expires before it is created', () => {
    expectRejected(() => when([], { ...create, expiresAt: at }), 'INVALID_EXPIRY', 400);
  });

  it('revokes for its owner, harmlessly twice', () => {
    expect(when([created], { type: 'RevokeCliToken', userId: 'u1', at: later })).to.deep.equal([revoked]);
    expect(cliTokenEventSchemas.CliTokenRevoked.safeParse(revoked.data).success).to.equal(true);
    expect(when([created, revoked], { type: 'RevokeCliToken', userId: 'u1', at: later })).to.deep.equal([]);
  });

  it('another user or an unknown token → 404 CLI_TOKEN_NOT_FOUND', () => {
    expectRejected(() => when([created], { type: 'RevokeCliToken', userId: 'u2', at: later }), 'CLI_TOKEN_NOT_FOUND', 404);
    expectRejected(() => when([], { type: 'RevokeCliToken', userId: 'u1', at: later }), 'CLI_TOKEN_NOT_FOUND', 404);
  });
});
