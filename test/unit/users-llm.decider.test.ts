import { expect } from 'chai';
import { userDecider, type UserCommand, type UserEvent } from '../../domain/users/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const spec = deciderSpec(userDecider);

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
    spec.given([registered]).when(set('openai')).then([{ type: 'UserLlmCredentialSet', data: { provider: 'openai', sealedApiKey: 'v1.iv.tag.data', baseUrl: null, at } }]);
  });

  it('records the base URL of an OpenAI-compatible server', () => {
    const [event] = spec.given([registered]).when(set('openai_compatible', 'http://127.0.0.1:8000/v1')).events();
    expect(event).to.deep.include({ type: 'UserLlmCredentialSet' });
    expect((event.data as { baseUrl: string }).baseUrl).to.equal('http://127.0.0.1:8000/v1');
  });

  it('replaces an earlier key with a new event (the latest one counts)', () => {
    const [event] = spec.given([registered, wasSet('openai', 'v1.old.old.old')]).when(set('openai', null, 'v1.new.new.new')).events();
    expect(event.type).to.equal('UserLlmCredentialSet');
    expect((event.data as { sealedApiKey: string }).sealedApiKey).to.equal('v1.new.new.new');
  });

  it('refuses openai_compatible without a base URL, naming body.baseUrl', () => {
    const err = spec.given([registered]).when(set('openai_compatible')).thenThrows('VALIDATION_FAILED', 'invalid');
    expect(err.details).to.deep.equal({ fields: [{ field: 'body.baseUrl', message: 'required for openai_compatible' }] });
  });

  it('refuses a base URL that is not http(s)', () => {
    for (const baseUrl of ['ftp://example.com', 'not a url', 'file:///etc/passwd']) {
      spec.given([registered]).when(set('openai', baseUrl)).thenThrows('VALIDATION_FAILED', 'invalid');
    }
  });

  it('refuses an unknown provider (offline has no key either)', () => {
    for (const provider of ['mistral', 'offline', '']) {
      const err = spec.given([registered]).when(set(provider)).thenThrows('VALIDATION_FAILED');
      expect((err.details as { fields: Array<{ field: string }> }).fields[0].field).to.equal('body.provider');
    }
    spec.given([registered, wasSet('openai')]).when(remove('mistral')).thenThrows('VALIDATION_FAILED');
  });

  it('refuses a key that was not sealed, so no plaintext can reach the log', () => {
    spec.given([registered]).when(set('openai', null, 'sk-plaintext-key')).thenThrows('KEY_NOT_SEALED');
  });

  it('removes a credential the user has', () => {
    spec.given([registered, wasSet('openai'), wasSet('anthropic')]).when(remove('openai')).then([{ type: 'UserLlmCredentialRemoved', data: { provider: 'openai', at } }]);
  });

  it('removing a credential the user does not have changes nothing', () => {
    spec.given([registered]).when(remove('openai')).then([]);
    spec.given([registered, wasSet('openai'), { type: 'UserLlmCredentialRemoved', data: { provider: 'openai', at } }]).when(remove('openai')).then([]);
  });

  it('tracks which providers have a credential in the state', () => {
    const state = spec.stateOf([registered, wasSet('openai'), wasSet('anthropic'), wasSet('openai'), { type: 'UserLlmCredentialRemoved', data: { provider: 'anthropic', at } }]);
    expect(state.llmProviders).to.deep.equal(['openai']);
  });

  it('answers USER_NOT_FOUND for a user that does not exist', () => {
    spec.given([]).when(set('openai')).thenThrows('USER_NOT_FOUND');
    spec.given([]).when(remove('openai')).thenThrows('USER_NOT_FOUND', 'not_found');
  });

  it('the event schemas refuse a plaintext key', () => {
    expect(userDecider.eventSchemas.UserLlmCredentialSet.safeParse({ provider: 'openai', sealedApiKey: 'sk-abc', baseUrl: null, at }).success).to.equal(false);
    expect(userDecider.eventSchemas.UserLlmCredentialSet.safeParse({ provider: 'offline', sealedApiKey: 'v1.a.b.c', baseUrl: null, at }).success).to.equal(false);
  });
});
