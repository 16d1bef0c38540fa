import { expect } from 'chai';
import { cliProjectors, findCliToken, findDeviceCodeByUserCodeHash } from '../../projections/cli.js';
import { findCliTokenAuth } from '../../projections/users-auth.js';
import { projectAll, projectionSpec, recordAll, type GivenEvent } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';

describe('CLI projections', () => {
  it('cli_tokens has the authenticator\'s shape, and a redelivered creation does not undo a revocation', async () => {
    const created: GivenEvent = {
      streamId: 'clitoken-t1',
      event: {
        type: 'CliTokenCreated',
        data: { tokenId: 't1', userId: 'u1', name: 'laptop', secretHash: 'a'.repeat(64), source: 'manual', deviceId: null, createdAt: at, expiresAt: '2026-04-01T00:00:00.000Z' },
      },
    };
    const revoked: GivenEvent = { streamId: 'clitoken-t1', event: { type: 'CliTokenRevoked', data: { tokenId: 't1', revokedBy: 'u1', revokedAt: '2026-02-01T00:00:00.000Z' } } };
    await projectionSpec(cliProjectors).given([created]).then(async (store) => {
      expect(await findCliTokenAuth(store, 't1')).to.deep.include({
        _id: 't1', userId: 'u1', secretHash: 'a'.repeat(64), revokedAt: null, expiresAt: '2026-04-01T00:00:00.000Z', name: 'laptop', source: 'manual', createdAt: at,
      });
    });
    const [recordedCreated, recordedRevoked] = recordAll([created, revoked]);
    await projectionSpec(cliProjectors).given([created, revoked]).then(async (store) => {
      await projectAll(cliProjectors, store, [recordedRevoked, recordedCreated, recordedRevoked]);
      expect((await findCliToken(store, 't1'))?.revokedAt).to.equal('2026-02-01T00:00:00.000Z');
    });
  });

  it('device_codes finds an authorization by its user-code hash and follows its status', async () => {
    const stream = 'devicecode-d1';
    const requested: GivenEvent = {
      streamId: stream,
      event: {
        type: 'DeviceAuthorizationRequested',
        data: { deviceId: 'd1', deviceSecretHash: 'b'.repeat(64), userCodeHash: 'c'.repeat(64), clientName: null, interval: 5, requestedAt: at, expiresAt: '2026-01-01T00:15:00.000Z' },
      },
    };
    const approved: GivenEvent = { streamId: stream, event: { type: 'DeviceAuthorizationApproved', data: { userId: 'u1', approvedAt: at } } };
    const redeemed: GivenEvent = { streamId: stream, event: { type: 'DeviceAuthorizationRedeemed', data: { tokenId: 't1', redeemedAt: at } } };
    const [r0, r1, r2] = recordAll([requested, approved, redeemed]);
    await projectionSpec(cliProjectors).given([requested, approved, redeemed]).then(async (store) => {
      // Out of order and repeated, as at-least-once delivery may hand them over.
      await projectAll(cliProjectors, store, [r0, r1, r0, r1, r2, r1]);
      const view = await findDeviceCodeByUserCodeHash(store, 'c'.repeat(64));
      expect(view).to.deep.include({ _id: 'd1', status: 'approved', decidedBy: 'u1', redeemed: true, version: 2 });
      expect(JSON.stringify(view), 'the device secret hash is not needed in the read model').to.not.include('b'.repeat(64));
      expect(await findDeviceCodeByUserCodeHash(store, 'd'.repeat(64))).to.equal(null);
    });
  });
});
