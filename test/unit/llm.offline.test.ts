import { expect } from 'chai';
import { loadConfig } from '../../infra/config/index.js';
import { createOfflineProvider, countWords } from '../../infra/llm/offline.js';
import { createLlmRegistry } from '../../infra/llm/registry.js';
import { LlmAbortError, LlmProviderError, isLlmAbort, type LlmMessage } from '../../ports/llm.js';

const services = (env: Record<string, string> = {}) => createLlmRegistry({ config: loadConfig(env), credentials: { organization: async () => [], user: async () => [] } });

describe('offline LLM provider', () => {
  const offline = createOfflineProvider();
  const ask = (messages: LlmMessage[], model = 'whatever-model-name') => offline.complete({ model, messages });

  it('answers the rendered prompt (the last user message) unchanged', async () => {
    const result = await ask([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: '  Summarise:\n the  quick brown fox ' },
    ]);
    expect(result.text).to.equal('  Summarise:\n the  quick brown fox ');
    expect(result.provider).to.equal('offline');
    expect(result.model).to.equal('whatever-model-name');
    expect(result.finishReason).to.equal('stop');
  });

  it('counts whitespace-separated words of prompt plus output as tokens, and costs nothing', async () => {
    const result = await ask([{ role: 'user', content: 'one two\tthree\nfour' }]);
    expect(result.usage).to.deep.equal({ promptTokens: 4, completionTokens: 4, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 8 });
    expect(result.cost).to.equal(0);
    expect(countWords('')).to.equal(0);
    expect(countWords('   \n ')).to.equal(0);
    expect(countWords(' a  b ')).to.equal(2);
  });

  it('answers an empty string with zero tokens when there is no user message', async () => {
    const result = await ask([{ role: 'system', content: 'only a system message' }]);
    expect(result.text).to.equal('');
    expect(result.usage.totalTokens).to.equal(0);
  });

  it('is deterministic for any model name', async () => {
    const messages: LlmMessage[] = [{ role: 'user', content: 'same input' }];
    const [a, b] = await Promise.all([ask(messages, 'gpt-4o'), ask(messages, 'anything/at:all')]);
    expect({ ...a, model: '' }).to.deep.equal({ ...b, model: '' });
  });

  it('streams its answer as one delta', async () => {
    const deltas: string[] = [];
    const result = await offline.complete({ model: 'm', messages: [{ role: 'user', content: 'a b c' }], stream: true, onDelta: (d) => deltas.push(d) });
    expect(deltas).to.deep.equal(['a b c']);
    expect(result.text).to.equal('a b c');
  });

  it('refuses an already aborted call with an AbortError', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await offline.complete({ model: 'm', messages: [{ role: 'user', content: 'x' }], signal: controller.signal }).catch((e) => e);
    expect(err).to.be.instanceOf(LlmAbortError);
    expect(err.name).to.equal('AbortError');
    expect(isLlmAbort(err)).to.equal(true);
  });

  it('is what the registry gives for "offline" without any credentials', async () => {
    const provider = await services().providerFor({ orgId: null }, 'offline');
    expect(provider.id).to.equal('offline');
    expect((await provider.complete({ model: 'x', messages: [{ role: 'user', content: 'hi there' }] })).usage.totalTokens).to.equal(4);
  });

  it('is never picked for a real provider that is not configured', async () => {
    const err = await services().providerFor({ orgId: null }, 'openai').catch((e) => e);
    expect(err).to.be.instanceOf(LlmProviderError);
    expect(err.code).to.equal('PROVIDER_NOT_CONFIGURED');
    expect(err.provider).to.equal('openai');
  });
});
