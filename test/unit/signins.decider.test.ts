import { expect } from 'chai';
import { signInDecider, signInStreamId, type SignInCommand, type SignInEvent } from '../../domain/signins/index.js';
import { signInIdForState } from '../../commands/signins.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:05:00.000Z';
const tooLate = '2026-01-01T00:10:00.000Z';
const spec = deciderSpec(signInDecider);

const start: SignInCommand = {
  type: 'StartSocialSignIn',
  signInId: 's1',
  provider: 'google',
  codeVerifierSealed: 'v1.a.b.c',
  nonceSealed: 'v1.d.e.f',
  redirectUri: 'http://127.0.0.1:3000/api/auth/google/callback',
  at,
  expiresAt: tooLate,
};
const started: SignInEvent = {
  type: 'SocialSignInStarted',
  data: {
    signInId: 's1',
    provider: 'google',
    codeVerifierSealed: 'v1.a.b.c',
    nonceSealed: 'v1.d.e.f',
    redirectUri: 'http://127.0.0.1:3000/api/auth/google/callback',
    startedAt: at,
    expiresAt: tooLate,
  },
};
const received: SignInEvent = { type: 'SocialSignInCallbackReceived', data: { receivedAt: later } };
const completed: SignInEvent = { type: 'SocialSignInCompleted', data: { userId: 'u1', created: true, completedAt: later } };
const failedWith = (reason: string, detail: string | null = null, failedAt = later): SignInEvent => ({ type: 'SocialSignInFailed', data: { reason, detail, failedAt } });

describe('social sign-in decider', () => {
  it('starts an attempt once', () => {
    spec.given([]).when(start).then([started]);
    spec.given([started]).when(start).thenThrows('SIGNIN_EXISTS', 'conflict');
  });

  it('accepts the first callback before expiry', () => {
    spec.given([started]).when({ type: 'ReceiveSocialSignInCallback', provider: 'google', at: later }).then([received]);
  });

  it('refuses a callback for an unknown attempt: INVALID_STATE, nothing to record', () => {
    spec.given([]).when({ type: 'ReceiveSocialSignInCallback', provider: 'google', at: later }).thenThrows('INVALID_STATE', 'invalid');
  });

  it('refuses a second callback whatever became of the first (replay)', () => {
    for (const history of [[started, received], [started, received, completed], [started, failedWith('MISSING_CODE')]]) {
      spec.given(history).when({ type: 'ReceiveSocialSignInCallback', provider: 'google', at: later }).thenThrows('INVALID_STATE', 'invalid');
    }
  });

  it('closes an expired attempt as failed instead of accepting it', () => {
    spec.given([started]).when({ type: 'ReceiveSocialSignInCallback', provider: 'google', at: tooLate }).then([
      failedWith('STATE_EXPIRED', null, tooLate),
    ]);
  });

  it('closes an attempt presented at the other provider\'s callback', () => {
    spec.given([started]).when({ type: 'ReceiveSocialSignInCallback', provider: 'github', at: later }).then([
      failedWith('PROVIDER_MISMATCH', 'github'),
    ]);
  });

  it('completes only after the callback was received, once', () => {
    const complete: SignInCommand = { type: 'CompleteSocialSignIn', userId: 'u1', created: true, at: later };
    spec.given([started, received]).when(complete).then([completed]);
    spec.given([started]).when(complete).thenThrows('SIGNIN_NOT_IN_PROGRESS', 'conflict');
    spec.given([started, received, completed]).when(complete).thenThrows('SIGNIN_NOT_IN_PROGRESS', 'conflict');
    spec.given([started, received, failedWith('EXCHANGE_FAILED')]).when(complete).thenThrows('SIGNIN_NOT_IN_PROGRESS', 'conflict');
  });

  it('records a failure for an attempt in progress, and nothing otherwise', () => {
    const fail: SignInCommand = { type: 'FailSocialSignIn', reason: 'EXCHANGE_FAILED', detail: 'invalid_grant', at: later };
    spec.given([started, received]).when(fail).then([failedWith('EXCHANGE_FAILED', 'invalid_grant')]);
    expect(spec.given([started]).when(fail).events()).to.have.length(1);
    spec.given([]).when(fail).then([]);
    spec.given([started, received, completed]).when(fail).then([]);
    spec.given([started, received, failedWith('MISSING_CODE')]).when(fail).then([]);
  });

  it('folds the attempt: what the callback needs, and how it ended', () => {
    const state = spec.stateOf([started, received, completed]);
    expect(state).to.include({ status: 'completed', provider: 'google', codeVerifierSealed: 'v1.a.b.c', nonceSealed: 'v1.d.e.f', userId: 'u1' });
    expect(spec.stateOf([started, failedWith('STATE_EXPIRED')])).to.include({ status: 'failed', failureReason: 'STATE_EXPIRED' });
  });

  it('refuses events that would store a secret in clear or an unstable reason', () => {
    const schemas = signInDecider.eventSchemas;
    expect(schemas.SocialSignInStarted.safeParse({ ...started.data, codeVerifierSealed: 'plain-verifier' }).success).to.equal(false);
    expect(schemas.SocialSignInFailed.safeParse({ reason: 'free text from a provider', detail: null, failedAt: at }).success).to.equal(false);
  });

  it('names the stream by a hash of the state, never the state itself', () => {
    const state = 'A'.repeat(43);
    const id = signInIdForState(state);
    expect(id).to.match(/^[0-9a-f]{40}$/);
    expect(signInStreamId(id)).to.equal(`signin-${id}`);
    expect(signInIdForState('B' + state.slice(1))).to.not.equal(id);
  });
});
