import { expect } from 'chai';
import { cliTokenDecider, cliTokenEventSchemas, type CliTokenCommand, type CliTokenEvent } from '../../domain/cli/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-03-01T00:00:00.000Z';
const spec = deciderSpec(cliTokenDecider);

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

describe('CLI token decider', () => {
  it('creates a token once, hash only, with a schema-valid event', () => {
    spec.given([]).when(create).then([created]);
    expect(cliTokenEventSchemas.CliTokenCreated.safeParse(created.data).success).to.equal(true);
    expect(cliTokenEventSchemas.CliTokenCreated.safeParse({ ...created.data, secretHash: 'plain-secret' }).success, 'a clear secret is refused').to.equal(false);
    spec.given([created]).when(create).thenThrows('CLI_TOKEN_EXISTS', 'conflict');
  });

  it('creates device tokens with their device id', () => {
    const [event] = spec.given([]).when({ ...create, source: 'device', deviceId: 'd1' }).events();
    expect(event.data).to.include({ source: 'device', deviceId: 'd1' });
  });

  it('refuses a token that expires before it is created', () => {
    spec.given([]).when({ ...create, expiresAt: at }).thenThrows('INVALID_EXPIRY', 'invalid');
  });

  it('revokes for its owner, harmlessly twice', () => {
    spec.given([created]).when({ type: 'RevokeCliToken', userId: 'u1', at: later }).then([revoked]);
    expect(cliTokenEventSchemas.CliTokenRevoked.safeParse(revoked.data).success).to.equal(true);
    spec.given([created, revoked]).when({ type: 'RevokeCliToken', userId: 'u1', at: later }).then([]);
  });

  it('another user or an unknown token → 404 CLI_TOKEN_NOT_FOUND', () => {
    spec.given([created]).when({ type: 'RevokeCliToken', userId: 'u2', at: later }).thenThrows('CLI_TOKEN_NOT_FOUND', 'not_found');
    spec.given([]).when({ type: 'RevokeCliToken', userId: 'u1', at: later }).thenThrows('CLI_TOKEN_NOT_FOUND', 'not_found');
  });
});
