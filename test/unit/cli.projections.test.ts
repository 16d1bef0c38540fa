import { expect } from 'chai';
import type { DomainEvent, RecordedEvent } from '../../domain/shared/events.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { cliProjectors, findCliToken, findDeviceCodeByUserCodeHash } from '../../projections/cli.js';
import { findCliTokenAuth } from '../../projections/users-auth.js';

const at = '2026-01-01T00:00:00.000Z';
let position = 0;
const recorded = (streamId: string, revision: number, event: DomainEvent): RecordedEvent => ({
  id: `e${++position}`,
  streamId,
  revision,
  position,
  schemaVersion: 1,
  type: event.type,
  data: event.data,
  metadata: { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: at },
});

describe('CLI projections', () => {
  let store: MemoryReadStore;
  const project = async (events: RecordedEvent[]) => {
    for (const e of events) for (const p of cliProjectors) if (p.categories.includes(e.streamId.split('-')[0])) await p.project(e, store);
  };
  beforeEach(async () => {
    store = new MemoryReadStore();
    for (const p of cliProjectors) await p.setup(store);
  });

  it('cli_tokens has the authenticator\'s shape, and a redelivered creation does not undo a revocation', async () => {
    const created = recorded('clitoken-t1', 0, {
      type: 'CliTokenCreated',
      data: { tokenId: 't1', userId: 'u1', name: 'laptop', secretHash: 'a'.repeat(64), source: 'manual', deviceId: null, createdAt: at, expiresAt: '2026-04-01T00:00:00.000Z' },
    });
    const revoked = recorded('clitoken-t1', 1, { type: 'CliTokenRevoked', data: { tokenId: 't1', revokedBy: 'u1', revokedAt: '2026-02-01T00:00:00.000Z' } });
    await project([created]);
    expect(await findCliTokenAuth(store, 't1')).to.deep.include({
      _id: 't1', userId: 'u1', secretHash: 'a'.repeat(64), revokedAt: null, expiresAt: '2026-04-01T00:00:00.000Z', name: 'laptop', source: 'manual', createdAt: at,
    });
    await project([revoked, created, revoked]);
    expect((await findCliToken(store, 't1'))?.revokedAt).to.equal('2026-02-01T00:00:00.000Z');
  });

  it('device_codes finds an authorization by its user-code hash and follows its status', async () => {
    const requested = recorded('devicecode-d1', 0, {
      type: 'DeviceAuthorizationRequested',
      data: { deviceId: 'd1', deviceSecretHash: 'b'.repeat(64), userCodeHash: 'c'.repeat(64), clientName: null, interval: 5, requestedAt: at, expiresAt: '2026-01-01T00:15:00.000Z' },
    });
    const approved = recorded('devicecode-d1', 1, { type: 'DeviceAuthorizationApproved', data: { userId: 'u1', approvedAt: at } });
    const redeemed = recorded('devicecode-d1', 2, { type: 'DeviceAuthorizationRedeemed', data: { tokenId: 't1', redeemedAt: at } });
    await project([requested, approved, requested, approved, redeemed, approved]);
    const view = await findDeviceCodeByUserCodeHash(store, 'c'.repeat(64));
    expect(view).to.deep.include({ _id: 'd1', status: 'approved', decidedBy: 'u1', redeemed: true, version: 2 });
    expect(JSON.stringify(view), 'the device secret hash is not needed in the read model').to.not.include('b'.repeat(64));
    expect(await findDeviceCodeByUserCodeHash(store, 'd'.repeat(64))).to.equal(null);
  });
});
