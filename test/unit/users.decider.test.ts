import { expect } from 'chai';
import { DomainError, fold } from '../../domain/shared/decider.js';
import { userDecider, type UserCommand, type UserEvent } from '../../domain/users/index.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:10:00.000Z';
const hash = (c: string) => c.repeat(64);
const pw = 'scrypt$16384$8$1$salt$hash';

const given = (events: UserEvent[]) => fold(userDecider.evolve, userDecider.initialState, events);
/** Decides, and checks every produced event against its own schema as the command handler would. */
function when(events: UserEvent[], command: UserCommand): UserEvent[] {
  const produced = userDecider.decide(command, given(events));
  for (const e of produced) expect(userDecider.eventSchemas[e.type].safeParse(e.data).success, `${e.type} matches its schema`).to.equal(true);
  return produced;
}
function expectRejected(fn: () => unknown, code: string, status?: number) {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code).to.equal(code);
    if (status !== undefined) expect(httpStatusOf(err as DomainError)).to.equal(status);
    return;
  }
  expect.fail(`expected ${code}`);
}

const register: UserCommand = { type: 'RegisterUser', userId: 'u1', email: 'a@example.com', name: 'Ann', passwordHash: pw, avatarUrl: null, socialIdentity: null, at };
const registered: UserEvent = { type: 'UserRegistered', data: { userId: 'u1', email: 'a@example.com', name: 'Ann', passwordHash: pw, avatarUrl: null, registeredAt: at } };
const resetRequested = (c: string, expiresAt = later): UserEvent => ({ type: 'PasswordResetRequested', data: { tokenHash: hash(c), expiresAt, requestedAt: at } });

describe('user decider: account', () => {
  it('registers a user once', () => {
    expect(when([], register)).to.deep.equal([registered]);
    expectRejected(() => when([registered], register), 'USER_EXISTS', 409);
  });

  it('registers a passwordless user linked to a social identity', () => {
    const events = when([], { ...register, passwordHash: null, socialIdentity: { provider: 'github', subject: '42' } });
    expect(events.map((e) => e.type)).to.deep.equal(['UserRegistered', 'SocialIdentityLinked']);
    const state = given(events);
    expect(state.hasPassword).to.equal(false);
    expect(state.socialIdentities).to.deep.equal([{ provider: 'github', subject: '42' }]);
  });

  it('updates only the profile fields that change, and nothing when none does', () => {
    expect(when([registered], { type: 'UpdateProfile', name: 'Ann', avatarUrl: 'https://x.test/a.png', preferences: { theme: 'dark' }, at: later })).to.deep.equal([
      { type: 'UserProfileUpdated', data: { avatarUrl: 'https://x.test/a.png', preferences: { theme: 'dark' }, updatedAt: later } },
    ]);
    const updated = when([registered], { type: 'UpdateProfile', preferences: { theme: 'dark' }, at });
    expect(when([registered, ...updated], { type: 'UpdateProfile', name: 'Ann', preferences: { theme: 'dark' }, at })).to.deep.equal([]);
    expect(given([registered, ...when([registered], { type: 'UpdateProfile', avatarUrl: null, name: 'Bo', at })]).name).to.equal('Bo');
    expectRejected(() => when([], { type: 'UpdateProfile', name: 'x', at }), 'USER_NOT_FOUND', 404);
  });

  it('changes the email, naming the previous one', () => {
    expect(when([registered], { type: 'ChangeEmail', email: 'b@example.com', at })).to.deep.equal([
      { type: 'UserEmailChanged', data: { previousEmail: 'a@example.com', email: 'b@example.com', changedAt: at } },
    ]);
    expect(when([registered], { type: 'ChangeEmail', email: 'a@example.com', at })).to.deep.equal([]);
    expectRejected(() => when([], { type: 'ChangeEmail', email: 'b@example.com', at }), 'USER_NOT_FOUND', 404);
  });

  it('switches the active scope, back to the personal workspace too', () => {
    const switched = when([registered], { type: 'SwitchActiveScope', orgId: 'o1', workspaceId: 'w1', at });
    expect(switched).to.deep.equal([{ type: 'ActiveScopeSwitched', data: { orgId: 'o1', workspaceId: 'w1', switchedAt: at } }]);
    expect(given([registered, ...switched])).to.include({ activeOrgId: 'o1', activeWorkspaceId: 'w1' });
    expect(when([registered, ...switched], { type: 'SwitchActiveScope', orgId: 'o1', workspaceId: 'w1', at })).to.deep.equal([]);
    expect(when([registered, ...switched], { type: 'SwitchActiveScope', orgId: null, workspaceId: null, at })).to.have.length(1);
    expectRejected(() => when([registered], { type: 'SwitchActiveScope', orgId: null, workspaceId: 'w1', at }), 'INVALID_SCOPE', 400);
    expectRejected(() => when([], { type: 'SwitchActiveScope', orgId: 'o1', workspaceId: null, at }), 'USER_NOT_FOUND', 404);
  });

  it('links a social identity once per provider', () => {
    const link: UserCommand = { type: 'LinkSocialIdentity', provider: 'google', subject: 's1', at };
    const linked = when([registered], link);
    expect(linked).to.deep.equal([{ type: 'SocialIdentityLinked', data: { provider: 'google', subject: 's1', linkedAt: at } }]);
    expect(when([registered, ...linked], link)).to.deep.equal([]);
    expect(when([registered, ...linked], { ...link, provider: 'github' })).to.have.length(1);
    expectRejected(() => when([registered, ...linked], { ...link, subject: 's2' }), 'SOCIAL_PROVIDER_ALREADY_LINKED', 409);
    expectRejected(() => when([], link), 'USER_NOT_FOUND', 404);
  });
});

describe('user decider: password reset', () => {
  const reset = (c: string, when = at): UserCommand => ({ type: 'ResetPassword', tokenHash: hash(c), passwordHash: pw, at: when });

  it('records a reset request', () => {
    expect(when([registered], { type: 'RequestPasswordReset', tokenHash: hash('a'), expiresAt: later, at })).to.deep.equal([resetRequested('a')]);
    expectRejected(() => when([], { type: 'RequestPasswordReset', tokenHash: hash('a'), expiresAt: later, at }), 'USER_NOT_FOUND', 404);
  });

  it('resets with the pending token and refuses tokens issued before it', () => {
    const events = when([registered, resetRequested('a')], reset('a', '2026-01-01T00:05:00.900Z'));
    expect(events).to.deep.equal([
      { type: 'PasswordResetCompleted', data: { tokenHash: hash('a'), passwordHash: pw, tokensValidAfter: Date.parse('2026-01-01T00:05:00Z') / 1000, resetAt: '2026-01-01T00:05:00.900Z' } },
    ]);
    const state = given([registered, resetRequested('a'), ...events]);
    expect(state.pendingReset).to.equal(null);
    expect(state.tokensValidAfter).to.equal(Date.parse('2026-01-01T00:05:00Z') / 1000);
  });

  it('a token works once', () => {
    const done = when([registered, resetRequested('a')], reset('a'));
    expectRejected(() => when([registered, resetRequested('a'), ...done], reset('a')), 'INVALID_RESET_TOKEN', 400);
  });

  it('only the newest token is valid', () => {
    expectRejected(() => when([registered, resetRequested('a'), resetRequested('b')], reset('a')), 'INVALID_RESET_TOKEN');
    expect(when([registered, resetRequested('a'), resetRequested('b')], reset('b'))).to.have.length(1);
  });

  it('refuses a wrong token, no request, an unknown user, and an expired token', () => {
    expectRejected(() => when([registered, resetRequested('a')], reset('c')), 'INVALID_RESET_TOKEN');
    expectRejected(() => when([registered], reset('a')), 'INVALID_RESET_TOKEN');
    expectRejected(() => when([], reset('a')), 'INVALID_RESET_TOKEN');
    expectRejected(() => when([registered, resetRequested('a')], reset('a', later)), 'RESET_TOKEN_EXPIRED', 400);
  });

  it('gives a passwordless user a password', () => {
    const passwordless = { ...registered, data: { ...registered.data, passwordHash: null } } as UserEvent;
    const done = when([passwordless, resetRequested('a')], reset('a'));
    expect(given([passwordless]).hasPassword).to.equal(false);
    expect(given([passwordless, resetRequested('a'), ...done]).hasPassword).to.equal(true);
  });
});
