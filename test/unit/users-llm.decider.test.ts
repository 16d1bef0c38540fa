import { expect } from 'chai';
import { DomainError, fold } from '../../domain/shared/decider.js';
import { userDecider, type UserCommand, type UserEvent } from '../../domain/users/index.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-01-01T00:00:00.000Z';
const given = (events: UserEvent[]) => fold(userDecider.evolve, userDecider.initialState, events);
function when(events: UserEvent[], command: UserCommand): UserEvent[] {
  const produced = userDecider.decide(command, given(events));
  for (const e of produced) expect(userDecider.eventSchemas[e.type].safeParse(e.data).success, `${e.type} matches its schema`).to.equal(true);
  return produced;
}
function rejected(events: UserEvent[], command: UserCommand): DomainError {
  try {
    userDecider.decide(command, given(events));
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return err as DomainError;
  }
  return expect.fail('expected a DomainError');
}

const registered: UserEvent = {
  type: 'UserRegistered',
  data: { userId: 'u1', email: 'a@example.com', name: 'Ann', passwordHash: 'scrypt$1$1$1$s$h', avatarUrl: null, registeredAt: at },
};
const set = (provider: string, baseUrl: string | null = null, sealedApiKey = 'v1.iv.tag.data') =>
  ({ type: 'SetUserLlmCredential', provider, sealedApiKey, baseUrl, at }) as UserCommand;
const remove = (provider: string) => ({ type: 'RemoveUserLlmCredential', provider, at }) as UserCommand;
const wasSet = (provider: 'openai' | 'anthropic', sealedApiKey = 'v1.a.b.c'): UserEvent => ({ type: 'UserLlmCredentialSet', data: { provider, sealedApiKey, baseUrl: null, at } });

describe('user decider: own LLM credentials', () => {
  it('records a sealed key for a provider', () => {
    expect(when([registered], set('openai'))).to.deep.equal([{ type: 'UserLlmCredentialSet', data: { provider: 'openai', sealedApiKey: 'v1.iv.tag.data', baseUrl: null, at } }]);
  });

  it('records the base URL of an OpenAI-compatible server', () => {
    const [event] = when([registered], set('openai_compatible', 'http://127.0.0.1:8000/v1'));
    expect(event).to.deep.include({ type: 'UserLlmCredentialSet' });
    expect((event.data as { baseUrl: string }).baseUrl).to.equal('http://127.0.0.1:8000/v1');
  });

  it('replaces an earlier key with a new event (the latest one counts)', () => {
    const [event] = when([registered, wasSet('openai', 'v1.old.old.old')], set('openai', null, 'v1.new.new.new'));
    expect(event.type).to.equal('UserLlmCredentialSet');
    expect((event.data as { sealedApiKey: string }).sealedApiKey).to.equal('v1.new.new.new');
  });

  it('refuses openai_compatible without a base URL, naming body.baseUrl', () => {
    const err = rejected([registered], set('openai_compatible'));
    expect(err.code).to.equal('VALIDATION_FAILED');
    expect(httpStatusOf(err)).to.equal(400);
    expect(err.details).to.deep.equal({ fields: [{ field: 'body.baseUrl', message: 'required for openai_compatible' }] });
  });

  it('refuses a base URL that is not http(s)', () => {
    for (const baseUrl of ['ftp://example.com', 'not a url', 'file:///etc/passwd']) {
      const err = rejected([registered], set('openai', baseUrl));
      expect(err.code, baseUrl).to.equal('VALIDATION_FAILED');
      expect(httpStatusOf(err)).to.equal(400);
    }
  });

  it('refuses an unknown provider (offline has no key either)', () => {
    for (const provider of ['mistral', 'offline', '']) {
      const err = rejected([registered], set(provider));
      expect(err.code, provider).to.equal('VALIDATION_FAILED');
      expect((err.details as { fields: Array<{ field: string }> }).fields[0].field).to.equal('body.provider');
    }
    expect(rejected([registered, wasSet('openai')], remove('mistral')).code).to.equal('VALIDATION_FAILED');
  });

  it('refuses a key that was not sealed, so no plaintext can reach the log', () => {
    const err = rejected([registered], set('openai', null, 'sk-plaintext-key'));
    expect(err.code).to.equal('KEY_NOT_SEALED');
  });

  it('removes a credential the user has', () => {
    expect(when([registered, wasSet('openai'), wasSet('anthropic')], remove('openai'))).to.deep.equal([{ type: 'UserLlmCredentialRemoved', data: { provider: 'openai', at } }]);
  });

  it('removing a credential the user does not have changes nothing', () => {
    expect(when([registered], remove('openai'))).to.deep.equal([]);
    expect(when([registered, wasSet('openai'), { type: 'UserLlmCredentialRemoved', data: { provider: 'openai', at } }], remove('openai'))).to.deep.equal([]);
  });

  it('tracks which providers have a credential in the state', () => {
    const state = given([registered, wasSet('openai'), wasSet('anthropic'), wasSet('openai'), { type: 'UserLlmCredentialRemoved', data: { provider: 'anthropic', at } }]);
    expect(state.llmProviders).to.deep.equal(['openai']);
  });

  it('answers USER_NOT_FOUND for a user that does not exist', () => {
    expect(rejected([], set('openai')).code).to.equal('USER_NOT_FOUND');
    expect(httpStatusOf(rejected([], remove('openai')))).to.equal(404);
  });

  it('the event schemas refuse a plaintext key', () => {
    expect(userDecider.eventSchemas.UserLlmCredentialSet.safeParse({ provider: 'openai', sealedApiKey: 'sk-abc', baseUrl: null, at }).success).to.equal(false);
    expect(userDecider.eventSchemas.UserLlmCredentialSet.safeParse({ provider: 'offline', sealedApiKey: 'v1.a.b.c', baseUrl: null, at }).success).to.equal(false);
  });
});
