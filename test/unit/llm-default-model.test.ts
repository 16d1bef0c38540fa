import { expect } from 'chai';
import { assistantModel } from '../../commands/assistant.js';
import { ConfigError, loadConfig } from '../../infra/config/index.js';
import { createLlmRegistry } from '../../infra/llm/registry.js';
import type { LlmCredentialLookup, StoredLlmCredential } from '../../ports/llm.js';

/** Issue 36: one rule for the model that answers when none is named, the same in every context. */

const userKeys = (stored: Array<Pick<StoredLlmCredential, 'provider' | 'apiKey' | 'baseUrl'>> = []): LlmCredentialLookup => ({
  organization: async () => [],
  user: async () => stored.map((c) => ({ ...c, updatedAt: 'x' })),
});
const gateway = (env: Record<string, string>, credentials = userKeys()) => createLlmRegistry({ config: loadConfig(env), credentials });
const personal = { orgId: null, userId: 'u1' };

describe('the default model (one rule for every context)', () => {
  it('is offline only when no real provider is configured', async () => {
    expect(await gateway({}).defaultModel(personal)).to.deep.equal({ provider: 'offline', model: 'offline' });
  });

  it('takes the first configured in the order OpenAI, Anthropic, Google, with its default model', async () => {
    expect(await gateway({ GEMINI_API_KEY: 'g' }).defaultModel(personal)).to.deep.equal({ provider: 'google', model: 'gemini-2.0-flash' });
    expect(await gateway({ GEMINI_API_KEY: 'g', ANTHROPIC_API_KEY: 'a' }).defaultModel(personal)).to.deep.equal({ provider: 'anthropic', model: 'claude-sonnet-4-0' });
    expect(await gateway({ GEMINI_API_KEY: 'g', ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o' }).defaultModel(personal)).to.deep.equal({ provider: 'openai', model: 'gpt-4o' });
  });

  it("counts the caller's own credentials, and skips an OpenAI-compatible server that has no default model", async () => {
    const own = gateway({}, userKeys([{ provider: 'anthropic', apiKey: 'mine', baseUrl: null }]));
    expect(await own.defaultModel(personal)).to.deep.equal({ provider: 'anthropic', model: 'claude-sonnet-4-0' });
    const compatibleOnly = gateway({}, userKeys([{ provider: 'openai_compatible', apiKey: '', baseUrl: 'http://127.0.0.1:1/v1' }]));
    expect((await compatibleOnly.credentials(personal)).byProvider.openai_compatible, 'configured').to.not.equal(undefined);
    expect(compatibleOnly.defaultModelOf('openai_compatible')).to.equal(null);
    expect(await compatibleOnly.defaultModel(personal)).to.deep.equal({ provider: 'offline', model: 'offline' });
  });

  it('the assistant: ASSISTANT_PROVIDER (and ASSISTANT_MODEL) say otherwise; unset, the shared rule', async () => {
    const llm = gateway({ OPENAI_API_KEY: 'o' });
    expect(await assistantModel(llm, personal, {})).to.deep.equal({ provider: 'openai', model: 'gpt-4o' });
    expect(await assistantModel(llm, personal, { ASSISTANT_PROVIDER: 'offline' })).to.deep.equal({ provider: 'offline', model: 'offline' });
    expect(await assistantModel(llm, personal, { ASSISTANT_PROVIDER: 'anthropic' })).to.deep.equal({ provider: 'anthropic', model: 'claude-sonnet-4-0' });
    expect(await assistantModel(llm, personal, { ASSISTANT_PROVIDER: 'openai', ASSISTANT_MODEL: 'gpt-4o-mini' })).to.deep.equal({ provider: 'openai', model: 'gpt-4o-mini' });
  });

  it('refuses at start a model without its provider, and an OpenAI-compatible assistant without a model', () => {
    expect(() => loadConfig({ ASSISTANT_MODEL: 'gpt-4o' })).to.throw(ConfigError, /ASSISTANT_MODEL: names a model of ASSISTANT_PROVIDER/);
    expect(() => loadConfig({ ASSISTANT_PROVIDER: 'openai_compatible' })).to.throw(ConfigError, /ASSISTANT_MODEL: required/);
    expect(loadConfig({}).ASSISTANT_PROVIDER).to.equal(undefined);
  });
});
