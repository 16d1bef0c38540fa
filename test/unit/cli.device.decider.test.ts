import { expect } from 'chai';
import {
  decidePoll,
  deviceAuthorizationDecider,
  deviceAuthorizationEventSchemas,
  SLOW_DOWN_INCREMENT_SECONDS,
  type DeviceAuthorizationCommand,
  type DeviceAuthorizationEvent,
} from '../../domain/cli/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const t0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();
const hash = (c: string) => c.repeat(64);
const spec = deciderSpec(deviceAuthorizationDecider);

const request: DeviceAuthorizationCommand = {
  type: 'RequestDeviceAuthorization',
  deviceId: 'd1',
  deviceSecretHash: hash('a'),
  userCodeHash: hash('b'),
  clientName: 'my laptop',
  interval: 5,
  at: at(0),
  expiresAt: at(900),
};
const requested: DeviceAuthorizationEvent = {
  type: 'DeviceAuthorizationRequested',
  data: { deviceId: 'd1', deviceSecretHash: hash('a'), userCodeHash: hash('b'), clientName: 'my laptop', interval: 5, requestedAt: at(0), expiresAt: at(900) },
};
const approved: DeviceAuthorizationEvent = { type: 'DeviceAuthorizationApproved', data: { userId: 'u1', approvedAt: at(30) } };
const denied: DeviceAuthorizationEvent = { type: 'DeviceAuthorizationDenied', data: { userId: 'u1', deniedAt: at(30) } };
const redeemed: DeviceAuthorizationEvent = { type: 'DeviceAuthorizationRedeemed', data: { tokenId: 't1', redeemedAt: at(35) } };

describe('device authorization decider', () => {
  it('records a request once, with hashes only, and every event matches its schema', () => {
    spec.given([]).when(request).then([requested]);
    spec.given([requested]).when(request).thenThrows('DEVICE_CODE_EXISTS', 'conflict');
    for (const e of [requested, approved, denied, redeemed]) {
      expect(deviceAuthorizationEventSchemas[e.type].safeParse(e.data).success, e.type).to.equal(true);
    }
  });

  it('approves or denies a pending code', () => {
    spec.given([requested]).when({ type: 'ApproveDeviceAuthorization', userId: 'u1', at: at(30) }).then([approved]);
    spec.given([requested]).when({ type: 'DenyDeviceAuthorization', userId: 'u1', at: at(30) }).then([denied]);
  });

  it('refuses an unknown code (404), an expired one (410) and a decided one (409)', () => {
    spec.given([]).when({ type: 'ApproveDeviceAuthorization', userId: 'u1', at: at(1) }).thenThrows('DEVICE_CODE_NOT_FOUND', 'not_found');
    spec.given([requested]).when({ type: 'ApproveDeviceAuthorization', userId: 'u1', at: at(900) }).thenThrows('DEVICE_CODE_EXPIRED', 'gone');
    spec.given([requested]).when({ type: 'DenyDeviceAuthorization', userId: 'u1', at: at(901) }).thenThrows('DEVICE_CODE_EXPIRED', 'gone');
    for (const decided of [[requested, approved], [requested, denied], [requested, approved, redeemed]]) {
      spec.given(decided).when({ type: 'ApproveDeviceAuthorization', userId: 'u2', at: at(40) }).thenThrows('DEVICE_CODE_ALREADY_DECIDED', 'conflict');
      spec.given(decided).when({ type: 'DenyDeviceAuthorization', userId: 'u2', at: at(40) }).thenThrows('DEVICE_CODE_ALREADY_DECIDED', 'conflict');
    }
  });

  it('redeems an approved code exactly once', () => {
    const redeem: DeviceAuthorizationCommand = { type: 'RedeemDeviceAuthorization', tokenId: 't1', at: at(35) };
    spec.given([requested, approved]).when(redeem).then([redeemed]);
    spec.given([requested, approved, redeemed]).when({ ...redeem, tokenId: 't2' }).thenThrows('invalid_grant', 'invalid');
  });

  it('refuses to redeem what polling would refuse, with the RFC 8628 error code', () => {
    const redeem: DeviceAuthorizationCommand = { type: 'RedeemDeviceAuthorization', tokenId: 't1', at: at(35) };
    spec.given([]).when(redeem).thenThrows('invalid_grant', 'invalid');
    spec.given([requested]).when(redeem).thenThrows('authorization_pending', 'invalid');
    spec.given([requested, denied]).when(redeem).thenThrows('access_denied', 'invalid');
    spec.given([requested, approved]).when({ ...redeem, at: at(900) }).thenThrows('expired_token', 'invalid');
  });
});

describe('device token polling (decidePoll)', () => {
  const pending = spec.stateOf([requested]);

  it('unknown device → invalid_grant', () => {
    expect(decidePoll(spec.stateOf([]), at(1), null)).to.include({ answer: 'invalid_grant', poll: null });
  });

  it('pending → authorization_pending, remembering the poll', () => {
    expect(decidePoll(pending, at(1), null)).to.deep.equal({ answer: 'authorization_pending', interval: 5, poll: { lastPollAt: at(1), interval: 5 } });
    // Exactly one interval later is not too fast.
    expect(decidePoll(pending, at(6), { lastPollAt: at(1), interval: 5 })).to.deep.include({ answer: 'authorization_pending', interval: 5 });
  });

  it('faster than the interval → slow_down, and the interval grows by 5 s from then on', () => {
    expect(SLOW_DOWN_INCREMENT_SECONDS).to.equal(5);
    const fast = decidePoll(pending, at(3), { lastPollAt: at(1), interval: 5 });
    expect(fast).to.deep.equal({ answer: 'slow_down', interval: 10, poll: { lastPollAt: at(3), interval: 10 } });
    // 6 s later would have been fine before; now 10 s are required, and the fast poll counts as the last one.
    const again = decidePoll(pending, at(9), fast.poll);
    expect(again).to.deep.equal({ answer: 'slow_down', interval: 15, poll: { lastPollAt: at(9), interval: 15 } });
    const patient = decidePoll(pending, at(24), again.poll);
    expect(patient).to.deep.equal({ answer: 'authorization_pending', interval: 15, poll: { lastPollAt: at(24), interval: 15 } });
  });

  it('denied → access_denied, however fast the poll', () => {
    expect(decidePoll(spec.stateOf([requested, denied]), at(31), { lastPollAt: at(30), interval: 5 })).to.include({ answer: 'access_denied', poll: null });
  });

  it('expired → expired_token, whether pending or approved', () => {
    expect(decidePoll(pending, at(900), null)).to.include({ answer: 'expired_token', poll: null });
    expect(decidePoll(spec.stateOf([requested, approved]), at(1000), null)).to.include({ answer: 'expired_token', poll: null });
  });

  it('approved → the token for the approver, even when polled fast', () => {
    expect(decidePoll(spec.stateOf([requested, approved]), at(31), { lastPollAt: at(30), interval: 5 })).to.deep.equal({ answer: 'issue_token', userId: 'u1', poll: null });
  });

  it('after the token was given → invalid_grant (once only), also after expiry', () => {
    expect(decidePoll(spec.stateOf([requested, approved, redeemed]), at(40), null)).to.include({ answer: 'invalid_grant', poll: null });
    expect(decidePoll(spec.stateOf([requested, approved, redeemed]), at(2000), null)).to.include({ answer: 'invalid_grant' });
  });
});
