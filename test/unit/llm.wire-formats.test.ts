import { expect } from 'chai';
import { createLlmProvider } from '../../infra/llm/registry.js';
import { priceTable } from '../../infra/llm/prices.js';
import type { LlmRequest } from '../../ports/llm.js';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';

/**
 * What each adapter puts on the wire (headers, body, paths) and the provider-specific parts of
 * reading the answer, against the loopback fakes. The behaviour all adapters share is the port
 * contract in test/contract/llm.test.ts.
 */

const KEY = 'sk-wire-test-key';
const limits = { timeoutMs: 5_000, maxRetries: 0 };
const ask = (model: string, extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello.' },
  ],
  ...extra,
});

describe('LLM wire formats', function () {
  const settings = (baseUrl: string) => ({ apiKey: KEY, baseUrl, limits, prices: priceTable(undefined) });

  describe('OpenAI Chat Completions', () => {
    let fake: FakeLlmServer;
    before(async () => {
      fake = await startFakeOpenAi();
    });
    beforeEach(() => fake.reset());
    after(async () => fake?.close());

    it('sends the bearer key, the messages, temperature and max_completion_tokens', async () => {
      await createLlmProvider('openai', settings(`${fake.url}/v1`)).complete(ask('gpt-4o', { temperature: 0.2, maxTokens: 64 }));
      const [req] = fake.requests;
      expect(req.path).to.equal('/v1/chat/completions');
      expect(req.headers.authorization).to.equal(`Bearer ${KEY}`);
      expect(req.headers['content-type']).to.equal('application/json');
      expect(req.body).to.deep.equal({
        model: 'gpt-4o',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Say hello.' },
        ],
        temperature: 0.2,
        max_completion_tokens: 64,
      });
    });

    it('asks for usage in the stream (stream_options.include_usage); compatible servers get max_tokens and no key when none is set', async () => {
      await createLlmProvider('openai_compatible', { ...settings(`${fake.url}/v1`), apiKey: null }).complete(ask('qwen', { stream: true, maxTokens: 10 }));
      const [req] = fake.requests;
      expect(req.headers.authorization).to.equal(undefined);
      expect(req.headers.accept).to.equal('text/event-stream');
      expect(req.body).to.include({ stream: true, max_tokens: 10 });
      expect(req.body.stream_options).to.deep.equal({ include_usage: true });
    });

    it('bills the cached part of the prompt at the cached rate', async () => {
      fake.usage = { prompt_tokens: 2000, cached_tokens: 2000, completion_tokens: 0, total_tokens: 2000 };
      const allCached = await createLlmProvider('openai', settings(`${fake.url}/v1`)).complete(ask('gpt-4o-mini'));
      expect(allCached.cost).to.equal(0.00015); // 2000 · 0.075e-6
      fake.usage = { prompt_tokens: 2000, cached_tokens: 0, completion_tokens: 0, total_tokens: 2000 };
      expect((await createLlmProvider('openai', settings(`${fake.url}/v1`)).complete(ask('gpt-4o-mini'))).cost).to.equal(0.0003);
    });
  });

  describe('Anthropic Messages', () => {
    let fake: FakeLlmServer;
    before(async () => {
      fake = await startFakeAnthropic();
    });
    beforeEach(() => fake.reset());
    after(async () => fake?.close());

    it('sends x-api-key and anthropic-version, the system prompt apart, and a max_tokens it requires', async () => {
      const base = `${fake.url}/v1/`;
      await createLlmProvider('anthropic', settings(base)).complete(ask('claude-3-5-haiku-latest', { temperature: 0 }));
      const [req] = fake.requests;
      expect(req.path).to.equal('/v1/messages');
      expect(req.headers['x-api-key']).to.equal(KEY);
      expect(req.headers['anthropic-version']).to.equal('2023-06-01');
      expect(req.headers.authorization).to.equal(undefined);
      expect(req.body).to.deep.equal({
        model: 'claude-3-5-haiku-latest',
        max_tokens: 4096,
        system: 'You are terse.',
        messages: [{ role: 'user', content: 'Say hello.' }],
        temperature: 0,
      });
    });

    it('takes output tokens from message_delta and keeps the cache counters of message_start', async () => {
      fake.usage = { output_tokens: 77, cache_read_input_tokens: 0, cache_creation_input_tokens: 1000, input_tokens: 0 };
      const result = await createLlmProvider('anthropic', settings(fake.url)).complete(ask('claude-3-5-haiku-latest', { stream: true }));
      expect(result.usage).to.deep.equal({ promptTokens: 1000, completionTokens: 77, cachedTokens: 0, cacheWriteTokens: 1000, totalTokens: 1077 });
      expect(result.cost).to.equal(0.001308); // 1000 written · 1e-6 + 77 · 4e-6
      expect(fake.requests[0].body.stream).to.equal(true);
    });
  });

  describe('Gemini generateContent', () => {
    let fake: FakeLlmServer;
    before(async () => {
      fake = await startFakeGemini();
    });
    beforeEach(() => fake.reset());
    after(async () => fake?.close());

    it('sends the key in x-goog-api-key (never in the URL), systemInstruction, roles user/model and generationConfig', async () => {
      await createLlmProvider('google', settings(fake.url)).complete({
        model: 'gemini-1.5-pro',
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'U1' },
          { role: 'assistant', content: 'A1' },
          { role: 'user', content: 'U2' },
        ],
        temperature: 0.5,
        maxTokens: 99,
      });
      const [req] = fake.requests;
      expect(req.path).to.equal('/v1beta/models/gemini-1.5-pro:generateContent');
      expect(req.query.get('key')).to.equal(null);
      expect(req.headers['x-goog-api-key']).to.equal(KEY);
      expect(req.body).to.deep.equal({
        contents: [
          { role: 'user', parts: [{ text: 'U1' }] },
          { role: 'model', parts: [{ text: 'A1' }] },
          { role: 'user', parts: [{ text: 'U2' }] },
        ],
        systemInstruction: { parts: [{ text: 'S' }] },
        generationConfig: { temperature: 0.5, maxOutputTokens: 99 },
      });
    });

    it('streams with streamGenerateContent?alt=sse and takes the last chunk’s usage', async () => {
      await createLlmProvider('google', settings(fake.url)).complete(ask('gemini-2.0-flash', { stream: true }));
      const [req] = fake.requests;
      expect(req.path).to.equal('/v1beta/models/gemini-2.0-flash:streamGenerateContent');
      expect(req.query.get('alt')).to.equal('sse');
    });

    it('lists only models that generate content, without the models/ prefix', async () => {
      const models = await createLlmProvider('google', settings(fake.url)).listModels!();
      expect(models).to.not.include('text-embedding-004');
      expect(models).to.include('gemini-fake-live');
      expect(fake.requests[0].path).to.equal('/v1beta/models');
    });
  });
});
