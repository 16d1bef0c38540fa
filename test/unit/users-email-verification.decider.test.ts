import { expect } from 'chai';
import { unverifiedAccountExpired, userDecider, type UserCommand, type UserEvent } from '../../domain/users/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const hourLater = '2026-01-01T01:00:00.000Z';
const twoDaysLater = '2026-01-03T00:00:00.000Z';
const weekLater = '2026-01-08T00:00:00.000Z';
const hash = (c: string) => c.repeat(64);
const pw = 'scrypt$16384$8$1$salt$hash';
const spec = deciderSpec(userDecider);

const signUp = (verification: { tokenHash: string; expiresAt: string } | null | undefined): Extract<UserCommand, { type: 'RegisterUser' }> => ({
  type: 'RegisterUser',
  userId: 'u1',
  email: 'a@example.com',
  name: 'Ann',
  passwordHash: pw,
  avatarUrl: null,
  socialIdentity: null,
  ...(verification !== undefined ? { verification } : {}),
  at,
});
const registered = (emailVerified?: boolean): UserEvent => ({
  type: 'UserRegistered',
  data: { userId: 'u1', email: 'a@example.com', name: 'Ann', passwordHash: pw, avatarUrl: null, registeredAt: at, ...(emailVerified !== undefined ? { emailVerified } : {}) },
});
const requested = (c: string, email = 'a@example.com', expiresAt = twoDaysLater, requestedAt = at): UserEvent => ({
  type: 'EmailVerificationRequested',
  data: { email, tokenHash: hash(c), expiresAt, requestedAt },
});
const verified = (c: string, verifiedAt = hourLater): UserEvent => ({ type: 'EmailVerified', data: { email: 'a@example.com', tokenHash: hash(c), verifiedAt } });
/** A password sign-up as the register route records it: unverified, one mail pending. */
const signedUp: UserEvent[] = [registered(false), requested('a')];
const expire = (email = 'a@example.com', when = weekLater): UserCommand => ({ type: 'ExpireUnverifiedAccount', email, ttlHours: 168, at: when });

describe('user decider: email ownership', () => {
  it('a password sign-up records the account unverified and the mail it was sent', () => {
    spec.given([]).when(signUp({ tokenHash: hash('a'), expiresAt: twoDaysLater })).then(signedUp);
    expect(spec.stateOf(signedUp)).to.include({ emailVerified: false, verifiedOnce: false, registeredAt: at });
    expect(spec.stateOf(signedUp).pendingVerification).to.deep.equal({ email: 'a@example.com', tokenHash: hash('a'), expiresAt: twoDaysLater });
  });

  it('an address proven elsewhere (a provider) is verified from the start', () => {
    const events = spec.given([]).when({ ...signUp(null), passwordHash: null, socialIdentity: { provider: 'google', subject: 's' } }).events();
    expect(events.map((e) => e.type)).to.deep.equal(['UserRegistered', 'SocialIdentityLinked']);
    expect(events[0].data).to.include({ emailVerified: true, passwordHash: null });
    expect(spec.stateOf(events)).to.include({ emailVerified: true, verifiedOnce: true, pendingVerification: null });
  });

  it('accounts registered before verification existed (no flag, no request) count as verified', () => {
    const state = spec.stateOf([registered()]);
    expect(state).to.include({ emailVerified: true, verifiedOnce: true });
    expect(unverifiedAccountExpired(state, '2030-01-01T00:00:00.000Z', 168)).to.equal(false);
    spec.given([registered()]).when(expire()).thenThrows('ACCOUNT_NOT_EXPIRED', 'conflict');
    // An email change recorded back then did not make them unverified either.
    const changed: UserEvent = { type: 'UserEmailChanged', data: { previousEmail: 'a@example.com', email: 'b@example.com', changedAt: at } };
    expect(spec.stateOf([registered(), changed]).emailVerified).to.equal(true);
  });

  it('verifies with the newest token, once', () => {
    spec.given(signedUp).when({ type: 'VerifyEmail', tokenHash: hash('a'), passwordProven: true, at: hourLater }).then([verified('a')]);
    const state = spec.stateOf([...signedUp, verified('a')]);
    expect(state).to.include({ emailVerified: true, verifiedOnce: true, pendingVerification: null });
    spec.given([...signedUp, verified('a')]).when({ type: 'VerifyEmail', tokenHash: hash('a'), passwordProven: true, at: hourLater }).thenThrows('INVALID_VERIFICATION_TOKEN', 'invalid');
  });

  it('refuses a wrong, superseded or unknown-user token alike, and an expired one with its own code', () => {
    spec.given(signedUp).when({ type: 'VerifyEmail', tokenHash: hash('b'), passwordProven: true, at: hourLater }).thenThrows('INVALID_VERIFICATION_TOKEN', 'invalid');
    const resent = [...signedUp, requested('b', 'a@example.com', twoDaysLater, hourLater)];
    spec.given(resent).when({ type: 'VerifyEmail', tokenHash: hash('a'), passwordProven: true, at: hourLater }).thenThrows('INVALID_VERIFICATION_TOKEN', 'invalid');
    spec.given(resent).when({ type: 'VerifyEmail', tokenHash: hash('b'), passwordProven: true, at: hourLater }).then([verified('b')]);
    spec.given([]).when({ type: 'VerifyEmail', tokenHash: hash('a'), passwordProven: true, at }).thenThrows('INVALID_VERIFICATION_TOKEN', 'invalid');
    const err = spec.given(signedUp).when({ type: 'VerifyEmail', tokenHash: hash('a'), passwordProven: true, at: twoDaysLater }).thenThrows('VERIFICATION_TOKEN_EXPIRED', 'invalid');
    expect(err.details).to.deep.equal({ field: 'body.token' });
  });

  it('resends only for an unverified address', () => {
    spec.given(signedUp).when({ type: 'RequestEmailVerification', tokenHash: hash('b'), expiresAt: weekLater, at: hourLater }).then([
      requested('b', 'a@example.com', weekLater, hourLater),
    ]);
    spec.given([...signedUp, verified('a')]).when({ type: 'RequestEmailVerification', tokenHash: hash('b'), expiresAt: weekLater, at }).thenThrows('EMAIL_ALREADY_VERIFIED', 'conflict');
    spec.given([]).when({ type: 'RequestEmailVerification', tokenHash: hash('b'), expiresAt: weekLater, at }).thenThrows('USER_NOT_FOUND', 'not_found');
  });

  it('changing the email makes it unverified again, with a mail to the new address; the old token is dead', () => {
    const verifiedAccount = [...signedUp, verified('a')];
    const events = spec.given(verifiedAccount).when({ type: 'ChangeEmail', email: 'b@example.com', verification: { tokenHash: hash('c'), expiresAt: weekLater }, at: hourLater }).then([
      { type: 'UserEmailChanged', data: { previousEmail: 'a@example.com', email: 'b@example.com', changedAt: hourLater } },
      requested('c', 'b@example.com', weekLater, hourLater),
    ]);
    const state = spec.stateOf([...verifiedAccount, ...events]);
    expect(state).to.include({ email: 'b@example.com', emailVerified: false, verifiedOnce: true });
    // Once proven, an account never expires, even while its new address is unproven.
    expect(unverifiedAccountExpired(state, '2030-01-01T00:00:00.000Z', 168)).to.equal(false);
    // A token for an address the account no longer has proves nothing.
    const changedUnverified = [...signedUp, { type: 'UserEmailChanged', data: { previousEmail: 'a@example.com', email: 'b@example.com', changedAt: at } } as UserEvent];
    spec.given(changedUnverified).when({ type: 'VerifyEmail', tokenHash: hash('a'), passwordProven: true, at: hourLater }).thenThrows('INVALID_VERIFICATION_TOKEN', 'invalid');
  });

  it('refuses to link a social identity to an account whose email is unverified', () => {
    const link: UserCommand = { type: 'LinkSocialIdentity', provider: 'google', subject: 's1', at: hourLater };
    spec.given(signedUp).when(link).thenThrows('ACCOUNT_EMAIL_UNVERIFIED', 'conflict');
    spec.given([...signedUp, verified('a')]).when(link).then([{ type: 'SocialIdentityLinked', data: { provider: 'google', subject: 's1', linkedAt: hourLater } }]);
  });

  it('expires an account that never proved an address, once its time is up, for its own email only', () => {
    spec.given(signedUp).when(expire('a@example.com', '2026-01-07T23:59:59.000Z')).thenThrows('ACCOUNT_NOT_EXPIRED', 'conflict');
    spec.given(signedUp).when(expire('other@example.com')).thenThrows('ACCOUNT_NOT_EXPIRED', 'conflict');
    spec.given([...signedUp, verified('a')]).when(expire()).thenThrows('ACCOUNT_NOT_EXPIRED', 'conflict');
    const expired = spec.given(signedUp).when(expire()).then([
      { type: 'UnverifiedAccountExpired', data: { email: 'a@example.com', tokensValidAfter: Date.parse(weekLater) / 1000, expiredAt: weekLater } },
    ]);
    const state = spec.stateOf([...signedUp, ...expired]);
    expect(state).to.include({ expired: true, pendingVerification: null, tokensValidAfter: Date.parse(weekLater) / 1000 });
    // Recorded already (an interrupted takeover): nothing more to record.
    spec.given([...signedUp, ...expired]).when(expire()).then([]);
    // Its pending token dies with it, and it cannot ask for another.
    spec.given([...signedUp, ...expired]).when({ type: 'VerifyEmail', tokenHash: hash('a'), passwordProven: true, at: weekLater }).thenThrows('INVALID_VERIFICATION_TOKEN', 'invalid');
    spec.given([...signedUp, ...expired]).when({ type: 'RequestEmailVerification', tokenHash: hash('b'), expiresAt: weekLater, at: weekLater }).thenThrows('USER_NOT_FOUND', 'not_found');
  });

  it('the expiry rule: never verified and registered at least the TTL ago', () => {
    const account = { verifiedOnce: false, registeredAt: at };
    expect(unverifiedAccountExpired(account, '2026-01-07T23:59:59.999Z', 168)).to.equal(false);
    expect(unverifiedAccountExpired(account, weekLater, 168)).to.equal(true);
    expect(unverifiedAccountExpired({ ...account, verifiedOnce: true }, weekLater, 168)).to.equal(false);
    expect(unverifiedAccountExpired(account, hourLater, 1)).to.equal(true);
  });
});

describe('user decider: pre-hijacking (issue 37)', () => {
  const disown = (c: string, via: 'email_verification' | 'password_reset' = 'email_verification'): UserCommand => ({ type: 'DisownUnverifiedAccount', via, tokenHash: hash(c), at: hourLater });
  const resetRequested: UserEvent = { type: 'PasswordResetRequested', data: { tokenHash: hash('r'), expiresAt: twoDaysLater, requestedAt: at } };

  it('the link verifies an account with a password only with its password proven', () => {
    spec.given(signedUp).when({ type: 'VerifyEmail', tokenHash: hash('a'), passwordProven: false, at: hourLater }).thenThrows('PASSWORD_REQUIRED', 'forbidden');
    // The token is judged first: a bad one never learns that the account has a password.
    spec.given(signedUp).when({ type: 'VerifyEmail', tokenHash: hash('b'), passwordProven: false, at: hourLater }).thenThrows('INVALID_VERIFICATION_TOKEN', 'invalid');
  });

  it('disowns a never-verified account with a valid link, once; never one that proved an address', () => {
    const events = spec.given(signedUp).when(disown('a')).events();
    expect(events.map((e) => e.type)).to.deep.equal(['UnverifiedAccountDisowned']);
    expect(events[0].data).to.include({ email: 'a@example.com', via: 'email_verification' });
    expect(spec.stateOf([...signedUp, ...events])).to.include({ expired: true, pendingVerification: null });
    spec.given([...signedUp, ...events]).when(disown('a')).thenThrows('INVALID_VERIFICATION_TOKEN', 'invalid');
    spec.given(signedUp).when(disown('b')).thenThrows('INVALID_VERIFICATION_TOKEN', 'invalid');
    const changed: UserEvent = { type: 'UserEmailChanged', data: { previousEmail: 'a@example.com', email: 'b@example.com', changedAt: at } };
    spec.given([...signedUp, verified('a'), changed, requested('c', 'b@example.com')]).when(disown('c')).thenThrows('START_OVER_NOT_ALLOWED', 'conflict');
  });

  it('a reset of a never-verified account is refused as such; the reset link disowns it instead', () => {
    spec.given([...signedUp, resetRequested]).when({ type: 'ResetPassword', tokenHash: hash('r'), passwordHash: pw, at: hourLater }).thenThrows('START_OVER_REQUIRED', 'conflict');
    const events = spec.given([...signedUp, resetRequested]).when(disown('r', 'password_reset')).events();
    expect(events[0].data).to.include({ via: 'password_reset' });
    spec.given([...signedUp, resetRequested]).when(disown('x', 'password_reset')).thenThrows('INVALID_RESET_TOKEN', 'invalid');
  });
});
