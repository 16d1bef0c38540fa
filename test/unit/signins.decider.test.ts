import { expect } from 'chai';
import { signInDecider, signInStreamId, type SignInCommand, type SignInEvent } from '../../domain/signins/index.js';
import { DomainError, fold } from '../../domain/shared/decider.js';
import { signInIdForState } from '../../commands/signins.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:05:00.000Z';
const tooLate = '2026-01-01T00:10:00.000Z';
const given = (events: SignInEvent[]) => fold(signInDecider.evolve, signInDecider.initialState, events);
const when = (events: SignInEvent[], command: SignInCommand) => signInDecider.decide(command, given(events));

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

/** Every event a decider emits must pass its own schema (the command handler refuses otherwise). */
function expectValid(events: SignInEvent[]) {
  for (const e of events) expect(signInDecider.eventSchemas[e.type].safeParse(e.data).success, e.type).to.equal(true);
  return events;
}

describe('social sign-in decider', () => {
  it('starts an attempt once', () => {
    expect(expectValid(when([], start))).to.deep.equal([started]);
    expectRejected(() => when([started], start), 'SIGNIN_EXISTS', 409);
  });

  it('accepts the first callback before expiry', () => {
    expect(expectValid(when([started], { type: 'ReceiveSocialSignInCallback', provider: 'google', at: later }))).to.deep.equal([received]);
  });

  it('refuses a callback for an unknown attempt: INVALID_STATE, nothing to record', () => {
    expectRejected(() => when([], { type: 'ReceiveSocialSignInCallback', provider: 'google', at: later }), 'INVALID_STATE', 400);
  });

  it('refuses a second callback whatever became of the first (replay)', () => {
    for (const history of [[started, received], [started, received, completed], [started, failedWith('MISSING_CODE')]]) {
      expectRejected(() => when(history, { type: 'ReceiveSocialSignInCallback', provider: 'google', at: later }), 'INVALID_STATE', 400);
    }
  });

  it('closes an expired attempt as failed instead of accepting it', () => {
    expect(expectValid(when([started], { type: 'ReceiveSocialSignInCallback', provider: 'google', at: tooLate }))).to.deep.equal([
      failedWith('STATE_EXPIRED', null, tooLate),
    ]);
  });

  it('closes an attempt presented at the other provider\'s callback', () => {
    expect(expectValid(when([started], { type: 'ReceiveSocialSignInCallback', provider: 'github', at: later }))).to.deep.equal([
      failedWith('PROVIDER_MISMATCH', 'github'),
    ]);
  });

  it('completes only after the callback was received, once', () => {
    const complete: SignInCommand = { type: 'CompleteSocialSignIn', userId: 'u1', created: true, at: later };
    expect(expectValid(when([started, received], complete))).to.deep.equal([completed]);
    expectRejected(() => when([started], complete), 'SIGNIN_NOT_IN_PROGRESS', 409);
    expectRejected(() => when([started, received, completed], complete), 'SIGNIN_NOT_IN_PROGRESS', 409);
    expectRejected(() => when([started, received, failedWith('EXCHANGE_FAILED')], complete), 'SIGNIN_NOT_IN_PROGRESS', 409);
  });

  it('records a failure for an attempt in progress, and nothing otherwise', () => {
    const fail: SignInCommand = { type: 'FailSocialSignIn', reason: 'EXCHANGE_FAILED', detail: 'invalid_grant', at: later };
    expect(expectValid(when([started, received], fail))).to.deep.equal([failedWith('EXCHANGE_FAILED', 'invalid_grant')]);
    expect(when([started], fail)).to.have.length(1);
    expect(when([], fail)).to.deep.equal([]);
    expect(when([started, received, completed], fail)).to.deep.equal([]);
    expect(when([started, received, failedWith('MISSING_CODE')], fail)).to.deep.equal([]);
  });

  it('folds the attempt: what the callback needs, and how it ended', () => {
    const state = given([started, received, completed]);
    expect(state).to.include({ status: 'completed', provider: 'google', codeVerifierSealed: 'v1.a.b.c', nonceSealed: 'v1.d.e.f', userId: 'u1' });
    expect(given([started, failedWith('STATE_EXPIRED')])).to.include({ status: 'failed', failureReason: 'STATE_EXPIRED' });
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
