import { expect } from 'chai';
import { userDecider, type UserCommand, type UserEvent } from '../../domain/users/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:10:00.000Z';
const hash = (c: string) => c.repeat(64);
const pw = 'scrypt$16384$8$1$salt$hash';
const spec = deciderSpec(userDecider);

const register: UserCommand = { type: 'RegisterUser', userId: 'u1', email: 'a@example.com', name: 'Ann', passwordHash: pw, avatarUrl: null, socialIdentity: null, at };
const registered: UserEvent = { type: 'UserRegistered', data: { userId: 'u1', email: 'a@example.com', name: 'Ann', passwordHash: pw, avatarUrl: null, registeredAt: at } };
const resetRequested = (c: string, expiresAt = later): UserEvent => ({ type: 'PasswordResetRequested', data: { tokenHash: hash(c), expiresAt, requestedAt: at } });

describe('user decider: account', () => {
  it('registers a user once', () => {
    spec.given([]).when(register).then([registered]);
    spec.given([registered]).when(register).thenThrows('USER_EXISTS', 'conflict');
  });

  it('registers a passwordless user linked to a social identity', () => {
    const events = spec.given([]).when({ ...register, passwordHash: null, socialIdentity: { provider: 'github', subject: '42' } }).events();
    expect(events.map((e) => e.type)).to.deep.equal(['UserRegistered', 'SocialIdentityLinked']);
    const state = spec.stateOf(events);
    expect(state.hasPassword).to.equal(false);
    expect(state.socialIdentities).to.deep.equal([{ provider: 'github', subject: '42' }]);
  });

  it('updates only the profile fields that change, and nothing when none does', () => {
    spec.given([registered]).when({ type: 'UpdateProfile', name: 'Ann', avatarUrl: 'https://x.test/a.png', preferences: { theme: 'dark' }, at: later }).then([
      { type: 'UserProfileUpdated', data: { avatarUrl: 'https://x.test/a.png', preferences: { theme: 'dark' }, updatedAt: later } },
    ]);
    const updated = spec.given([registered]).when({ type: 'UpdateProfile', preferences: { theme: 'dark' }, at }).events();
    spec.given([registered, ...updated]).when({ type: 'UpdateProfile', name: 'Ann', preferences: { theme: 'dark' }, at }).then([]);
    expect(spec.stateOf([registered, ...spec.given([registered]).when({ type: 'UpdateProfile', avatarUrl: null, name: 'Bo', at }).events()]).name).to.equal('Bo');
    spec.given([]).when({ type: 'UpdateProfile', name: 'x', at }).thenThrows('USER_NOT_FOUND', 'not_found');
  });

  it('changes the email, naming the previous one', () => {
    spec.given([registered]).when({ type: 'ChangeEmail', email: 'b@example.com', at }).then([
      { type: 'UserEmailChanged', data: { previousEmail: 'a@example.com', email: 'b@example.com', changedAt: at } },
    ]);
    spec.given([registered]).when({ type: 'ChangeEmail', email: 'a@example.com', at }).then([]);
    spec.given([]).when({ type: 'ChangeEmail', email: 'b@example.com', at }).thenThrows('USER_NOT_FOUND', 'not_found');
  });

  it('switches the active scope, back to the personal workspace too', () => {
    const switched = spec.given([registered]).when({ type: 'SwitchActiveScope', orgId: 'o1', workspaceId: 'w1', at }).events();
    expect(switched).to.deep.equal([{ type: 'ActiveScopeSwitched', data: { orgId: 'o1', workspaceId: 'w1', switchedAt: at } }]);
    expect(spec.stateOf([registered, ...switched])).to.include({ activeOrgId: 'o1', activeWorkspaceId: 'w1' });
    spec.given([registered, ...switched]).when({ type: 'SwitchActiveScope', orgId: 'o1', workspaceId: 'w1', at }).then([]);
    expect(spec.given([registered, ...switched]).when({ type: 'SwitchActiveScope', orgId: null, workspaceId: null, at }).events()).to.have.length(1);
    spec.given([registered]).when({ type: 'SwitchActiveScope', orgId: null, workspaceId: 'w1', at }).thenThrows('INVALID_SCOPE', 'invalid');
    spec.given([]).when({ type: 'SwitchActiveScope', orgId: 'o1', workspaceId: null, at }).thenThrows('USER_NOT_FOUND', 'not_found');
  });

  it('links a social identity once per provider', () => {
    const link: UserCommand = { type: 'LinkSocialIdentity', provider: 'google', subject: 's1', at };
    const linked = spec.given([registered]).when(link).events();
    expect(linked).to.deep.equal([{ type: 'SocialIdentityLinked', data: { provider: 'google', subject: 's1', linkedAt: at } }]);
    spec.given([registered, ...linked]).when(link).then([]);
    expect(spec.given([registered, ...linked]).when({ ...link, provider: 'github' }).events()).to.have.length(1);
    spec.given([registered, ...linked]).when({ ...link, subject: 's2' }).thenThrows('SOCIAL_PROVIDER_ALREADY_LINKED', 'conflict');
    spec.given([]).when(link).thenThrows('USER_NOT_FOUND', 'not_found');
  });
});

describe('user decider: password reset', () => {
  const reset = (c: string, time = at): UserCommand => ({ type: 'ResetPassword', tokenHash: hash(c), passwordHash: pw, at: time });

  it('records a reset request', () => {
    spec.given([registered]).when({ type: 'RequestPasswordReset', tokenHash: hash('a'), expiresAt: later, at }).then([resetRequested('a')]);
    spec.given([]).when({ type: 'RequestPasswordReset', tokenHash: hash('a'), expiresAt: later, at }).thenThrows('USER_NOT_FOUND', 'not_found');
  });

  it('resets with the pending token and refuses tokens issued before it', () => {
    const events = spec.given([registered, resetRequested('a')]).when(reset('a', '2026-01-01T00:05:00.900Z')).events();
    expect(events).to.deep.equal([
      { type: 'PasswordResetCompleted', data: { tokenHash: hash('a'), passwordHash: pw, tokensValidAfter: Date.parse('2026-01-01T00:05:00Z') / 1000, resetAt: '2026-01-01T00:05:00.900Z' } },
    ]);
    const state = spec.stateOf([registered, resetRequested('a'), ...events]);
    expect(state.pendingReset).to.equal(null);
    expect(state.tokensValidAfter).to.equal(Date.parse('2026-01-01T00:05:00Z') / 1000);
  });

  it('a token works once', () => {
    const done = spec.given([registered, resetRequested('a')]).when(reset('a')).events();
    spec.given([registered, resetRequested('a'), ...done]).when(reset('a')).thenThrows('INVALID_RESET_TOKEN', 'invalid');
  });

  it('only the newest token is valid', () => {
    spec.given([registered, resetRequested('a'), resetRequested('b')]).when(reset('a')).thenThrows('INVALID_RESET_TOKEN');
    expect(spec.given([registered, resetRequested('a'), resetRequested('b')]).when(reset('b')).events()).to.have.length(1);
  });

  it('refuses a wrong token, no request, an unknown user, and an expired token', () => {
    spec.given([registered, resetRequested('a')]).when(reset('c')).thenThrows('INVALID_RESET_TOKEN');
    spec.given([registered]).when(reset('a')).thenThrows('INVALID_RESET_TOKEN');
    spec.given([]).when(reset('a')).thenThrows('INVALID_RESET_TOKEN');
    spec.given([registered, resetRequested('a')]).when(reset('a', later)).thenThrows('RESET_TOKEN_EXPIRED', 'invalid');
  });

  it('gives a passwordless user a password', () => {
    const passwordless = { ...registered, data: { ...registered.data, passwordHash: null } } as UserEvent;
    const done = spec.given([passwordless, resetRequested('a')]).when(reset('a')).events();
    expect(spec.stateOf([passwordless]).hasPassword).to.equal(false);
    expect(spec.stateOf([passwordless, resetRequested('a'), ...done]).hasPassword).to.equal(true);
  });
});
