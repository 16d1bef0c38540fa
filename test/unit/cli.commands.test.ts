import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { DevicePollTracker, exchangeDeviceCode, decideDeviceAuthorization, hashUserCode, requestDeviceAuthorization } from '../../commands/cli.js';
import type { CommandContext } from '../../commands/handle.js';
import { DomainError } from '../../domain/shared/decider.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';

const sha = (v: string) => createHash('sha256').update(v).digest('hex');
const t0 = Date.parse('2026-01-01T00:00:00Z');
const ctx = (seconds = 0): CommandContext => ({
  actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, now: new Date(t0 + seconds * 1000),
});

async function rfcError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return (err as DomainError).code;
  }
  return expect.fail('expected an error') as never;
}

describe('CLI device commands (against an in-memory event store)', () => {
  let store: SqliteEventStore;
  beforeEach(() => (store = new SqliteEventStore(':memory:')));
  afterEach(async () => store.close());

  const start = (deviceId: string, codes: string[]) =>
    requestDeviceAuthorization(store, ctx(), {
      deviceId,
      deviceSecretHash: sha(`secret-${deviceId}`),
      clientName: null,
      ttlSeconds: 900,
      interval: 5,
      newUserCode: () => codes.shift()!,
    });

  it('draws another user code when the first one is taken (reservation)', async () => {
    const first = await start('d1', ['BCDFGHJK']);
    const second = await start('d2', ['BCDFGHJK', 'ZZZZXXXX']);
    expect([first.userCode, second.userCode]).to.deep.equal(['BCDFGHJK', 'ZZZZXXXX']);
    const [event] = await store.readStream('devicecode-d2');
    expect((event.data as { userCodeHash: string }).userCodeHash).to.equal(hashUserCode('ZZZZXXXX'));
    // Nothing in the log carries the code itself.
    const all = JSON.stringify(await store.readAll({ after: -1, maxCount: 100 }));
    expect(all).to.not.include('ZZZZXXXX');
    expect(all).to.not.include('secret-d2');
  });

  it('gives up with 503 after a few collisions', async () => {
    await start('d1', ['BCDFGHJK']);
    const code = await rfcError(start('d2', Array(10).fill('BCDFGHJK')));
    expect(code).to.equal('USER_CODE_UNAVAILABLE');
  });

  it('polls: invalid secret, pending, slow_down (+5 s), then the token once', async () => {
    await start('d1', ['BCDFGHJK']);
    const tracker = new DevicePollTracker();
    const poll = (seconds: number, secret = 'secret-d1', tokenId = `t${seconds}`) =>
      exchangeDeviceCode(store, ctx(seconds), tracker, { deviceId: 'd1', presentedSecretHash: sha(secret), tokenId, tokenSecretHash: sha('tok'), tokenTtlDays: 90 });

    expect(await rfcError(poll(1, 'wrong'))).to.equal('invalid_grant');
    expect(await rfcError(exchangeDeviceCode(store, ctx(1), tracker, { deviceId: 'nope', presentedSecretHash: sha('x'), tokenId: 't', tokenSecretHash: sha('t'), tokenTtlDays: 90 }))).to.equal('invalid_grant');
    expect(await rfcError(poll(1))).to.equal('authorization_pending');
    expect(await rfcError(poll(2))).to.equal('slow_down');
    expect(tracker.get('d1')).to.deep.equal({ lastPollAt: new Date(t0 + 2000).toISOString(), interval: 10 });
    expect(await rfcError(poll(8)), '6 s is no longer enough').to.equal('slow_down');
    expect(await rfcError(poll(23))).to.equal('authorization_pending');

    await decideDeviceAuthorization(store, ctx(24), 'd1', 'approve', 'u1');
    const issued = await poll(25, 'secret-d1', 'tok-1');
    expect(issued).to.include({ tokenId: 'tok-1', userId: 'u1' });
    expect(issued.expiresAt).to.equal(new Date(t0 + 25_000 + 90 * 86_400_000).toISOString());
    const [created] = await store.readStream('clitoken-tok-1');
    expect(created.type).to.equal('CliTokenCreated');
    expect(created.data).to.include({ userId: 'u1', source: 'device', deviceId: 'd1' });
    expect(created.metadata.actorId, 'recorded as the approver').to.equal('u1');
    expect(await rfcError(poll(40))).to.equal('invalid_grant');
  });

  it('two racing polls of an approved code: exactly one token', async () => {
    await start('d1', ['BCDFGHJK']);
    await decideDeviceAuthorization(store, ctx(10), 'd1', 'approve', 'u1');
    const tracker = new DevicePollTracker();
    const results = await Promise.allSettled(
      ['a', 'b', 'c'].map((id) => exchangeDeviceCode(store, ctx(11), tracker, { deviceId: 'd1', presentedSecretHash: sha('secret-d1'), tokenId: id, tokenSecretHash: sha(id), tokenTtlDays: 90 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as DomainError).code).to.equal('invalid_grant');
    const tokens = (await store.readAll({ after: -1, maxCount: 100 })).filter((e) => e.type === 'CliTokenCreated');
    expect(tokens).to.have.length(1);
  });

  it('denied → access_denied; expired → expired_token', async () => {
    await start('d1', ['BCDFGHJK']);
    await start('d2', ['CCCCDDDD']);
    await decideDeviceAuthorization(store, ctx(5), 'd1', 'deny', 'u1');
    const tracker = new DevicePollTracker();
    const poll = (id: string, seconds: number) =>
      exchangeDeviceCode(store, ctx(seconds), tracker, { deviceId: id, presentedSecretHash: sha(`secret-${id}`), tokenId: 't', tokenSecretHash: sha('t'), tokenTtlDays: 90 });
    expect(await rfcError(poll('d1', 6))).to.equal('access_denied');
    expect(await rfcError(poll('d2', 900))).to.equal('expired_token');
    expect(tracker.size, 'final answers are not remembered').to.equal(0);
  });
});
