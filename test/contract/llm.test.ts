import { expect } from 'chai';
import { loadConfig } from '../../infra/config/index.js';
import { createLlmProvider } from '../../infra/llm/registry.js';
import { priceTable, type PriceTable } from '../../infra/llm/prices.js';
import { LlmProviderError, isLlmAbort, type LlmProvider, type LlmProviderId, type LlmRequest, type LlmUsage } from '../../ports/llm.js';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAi, type CapturedRequest, type FakeLlmServer } from '../support/fake-llm/index.js';

/**
 * The LLM port's contract, run unchanged against each adapter talking over real HTTP to a local
 * server that speaks its wire format; then what each wire format must look like.
 */

const KEY = 'sk-contract-test-key-123456';
const limits = { timeoutMs: 5_000, maxRetries: 2 };

interface Subject {
  id: Exclude<LlmProviderId, 'offline'>;
  start(): Promise<FakeLlmServer>;
  baseUrl(fake: FakeLlmServer): string;
  model: string;
  answeredModel: string;
  usage: LlmUsage;
  cost: number;
  /** The key as the fake saw it. */
  keyOf(req: CapturedRequest): unknown;
  /** What the provider answers a wrong key with. */
  badKeyStatus: number;
}

const subjects: Subject[] = [
  {
    id: 'openai',
    start: startFakeOpenAi,
    baseUrl: (f) => `${f.url}/v1`,
    model: 'gpt-4o',
    answeredModel: 'gpt-4o-2024-08-06',
    usage: { promptTokens: 1000, completionTokens: 200, cachedTokens: 400, cacheWriteTokens: 0, totalTokens: 1200 },
    cost: 0.004, // 600 plain · 2.5e-6 + 400 cached · 1.25e-6 + 200 · 1e-5
    keyOf: (r) => r.headers.authorization,
    badKeyStatus: 401,
  },
  {
    id: 'openai_compatible',
    start: startFakeOpenAi,
    baseUrl: (f) => `${f.url}/v1/`,
    model: 'llama3.1:8b',
    answeredModel: 'llama3.1:8b-2024-08-06',
    usage: { promptTokens: 1000, completionTokens: 200, cachedTokens: 400, cacheWriteTokens: 0, totalTokens: 1200 },
    cost: 0, // self-hosted: no price unless LLM_PRICES gives one
    keyOf: (r) => r.headers.authorization,
    badKeyStatus: 401,
  },
  {
    id: 'anthropic',
    start: startFakeAnthropic,
    baseUrl: (f) => f.url,
    model: 'claude-sonnet-4-0',
    answeredModel: 'claude-sonnet-4-0',
    // input_tokens 100 + cache_read 700 + cache_creation 200
    usage: { promptTokens: 1000, completionTokens: 50, cachedTokens: 700, cacheWriteTokens: 200, totalTokens: 1050 },
    cost: 0.00201, // 100 · 3e-6 + 700 · 0.3e-6 + 200 · 3.75e-6 + 50 · 15e-6
    keyOf: (r) => r.headers['x-api-key'],
    badKeyStatus: 401,
  },
  {
    id: 'google',
    start: startFakeGemini,
    baseUrl: (f) => f.url,
    model: 'gemini-2.0-flash',
    answeredModel: 'gemini-2.0-flash',
    usage: { promptTokens: 120, completionTokens: 30, cachedTokens: 20, cacheWriteTokens: 0, totalTokens: 150 },
    cost: 0.0000225, // 100 · 0.1e-6 + 20 · 0.025e-6 + 30 · 0.4e-6
    keyOf: (r) => r.headers['x-goog-api-key'],
    badKeyStatus: 400,
  },
];

const ask = (model: string, extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello.' },
  ],
  ...extra,
});

async function failure(promise: Promise<unknown>): Promise<any> {
  const outcome = await promise.then(
    () => null,
    (err) => err,
  );
  if (outcome === null) throw new Error('expected the call to fail');
  return outcome;
}

for (const subject of subjects) {
  describe(`LLM port contract: ${subject.id}`, function () {
    let fake: FakeLlmServer;
    const make = (over: { apiKey?: string; limits?: Partial<typeof limits>; prices?: PriceTable; baseUrl?: string } = {}): LlmProvider =>
      createLlmProvider(subject.id, {
        apiKey: over.apiKey ?? KEY,
        baseUrl: over.baseUrl ?? subject.baseUrl(fake),
        limits: { ...limits, ...over.limits },
        prices: over.prices ?? priceTable(undefined),
      });

    before(async () => {
      fake = await subject.start();
    });
    beforeEach(() => {
      fake.reset();
      fake.apiKey = KEY;
    });
    after(async () => fake?.close());

    it('answers with the text, the usage from the answer, the cost from the price table', async () => {
      const result = await make().complete(ask(subject.model));
      expect(result.text).to.equal('Hello from the fake.');
      expect(result.usage).to.deep.equal(subject.usage);
      expect(result.cost).to.equal(subject.cost);
      expect(result.priced).to.equal(subject.cost > 0);
      expect(result.provider).to.equal(subject.id);
      expect(result.model).to.equal(subject.answeredModel);
      expect(result.finishReason).to.equal('stop');
      expect(subject.keyOf(fake.requests[0])).to.include(KEY);
    });

    it('streams the text in deltas and still reports the final usage', async () => {
      fake.text = 'one two three four';
      const deltas: string[] = [];
      const result = await make().complete(ask(subject.model, { stream: true, onDelta: (d) => deltas.push(d) }));
      expect(deltas.length).to.be.greaterThan(1);
      expect(deltas.join('')).to.equal('one two three four');
      expect(result.text).to.equal('one two three four');
      expect(result.usage).to.deep.equal(subject.usage);
      expect(result.cost).to.equal(subject.cost);
      expect(result.finishReason).to.equal('stop');
    });

    it('retries a 429 after the Retry-After the provider asked for', async () => {
      fake.failures = [{ status: 429, retryAfter: '0.3' }];
      const started = Date.now();
      const result = await make().complete(ask(subject.model));
      expect(Date.now() - started).to.be.at.least(290);
      expect(result.text).to.equal('Hello from the fake.');
      expect(fake.requests).to.have.length(2);
    });

    it('gives up after LLM_MAX_RETRIES retries with PROVIDER_RATE_LIMITED and the wait asked for', async () => {
      fake.failures = Array.from({ length: 5 }, () => ({ status: 429, retryAfter: '0.05' }));
      const err = await failure(make().complete(ask(subject.model)));
      expect(err).to.be.instanceOf(LlmProviderError);
      expect(err).to.include({ code: 'PROVIDER_RATE_LIMITED', status: 429, retryAfter: 0.05, provider: subject.id });
      expect(fake.requests).to.have.length(limits.maxRetries + 1);
    });

    it('does not sleep past its deadline: a Retry-After longer than the time left fails at once', async () => {
      fake.failures = [{ status: 429, retryAfter: '30' }];
      const started = Date.now();
      const err = await failure(make({ limits: { timeoutMs: 2_000 } }).complete(ask(subject.model)));
      expect(Date.now() - started).to.be.below(1_000);
      expect(err).to.include({ code: 'PROVIDER_RATE_LIMITED', retryAfter: 30 });
      expect(fake.requests).to.have.length(1);
    });

    it('retries a 5xx with backoff, and reports PROVIDER_ERROR when it keeps failing', async () => {
      fake.failures = [{ status: 503 }];
      expect((await make().complete(ask(subject.model))).text).to.equal('Hello from the fake.');
      expect(fake.requests).to.have.length(2);
      fake.reset();
      fake.failures = Array.from({ length: 5 }, () => ({ status: 500 }));
      const err = await failure(make({ limits: { maxRetries: 1 } }).complete(ask(subject.model)));
      expect(err).to.include({ code: 'PROVIDER_ERROR', status: 500 });
      expect(err.message).to.match(new RegExp(`^${subject.id} answered 500: `));
      expect(fake.requests).to.have.length(2);
    });

    it('does not retry what asking again cannot fix (400), nor a wrong key, and never echoes the key', async () => {
      fake.failures = [{ status: 400 }];
      expect(await failure(make().complete(ask(subject.model)))).to.include({ code: 'PROVIDER_ERROR', status: 400 });
      expect(fake.requests).to.have.length(1);
      const err = await failure(make({ apiKey: 'sk-wrong-secret-key-987' }).complete(ask(subject.model)));
      expect(err).to.include({ code: 'PROVIDER_ERROR', status: subject.badKeyStatus });
      expect(err.message).to.not.include('sk-wrong-secret-key-987');
      expect(fake.requests).to.have.length(2);
    });

    it('times out with PROVIDER_TIMEOUT when the provider is slower than the deadline', async () => {
      fake.delayMs = 2_000;
      const started = Date.now();
      const err = await failure(make({ limits: { timeoutMs: 300 } }).complete(ask(subject.model)));
      expect(err).to.be.instanceOf(LlmProviderError);
      expect(err.code).to.equal('PROVIDER_TIMEOUT');
      expect(Date.now() - started).to.be.within(280, 1_200);
    });

    it('rejects promptly with an AbortError when the caller aborts, also mid-stream', async () => {
      fake.delayMs = 2_000;
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = Date.now();
      const err = await failure(make().complete(ask(subject.model, { signal: controller.signal })));
      expect(Date.now() - started).to.be.below(600);
      expect(isLlmAbort(err)).to.equal(true);
      expect(err.name).to.equal('AbortError');
      expect(err).to.not.be.instanceOf(LlmProviderError);

      fake.delayMs = 0;
      fake.streamDelayMs = 300;
      fake.text = 'a b c d e f g h';
      const midStream = new AbortController();
      const deltas: string[] = [];
      let abortedAt = 0;
      const onDelta = (d: string) => {
        deltas.push(d);
        abortedAt = Date.now();
        midStream.abort();
      };
      const streamed = await failure(make().complete(ask(subject.model, { signal: midStream.signal, stream: true, onDelta })));
      expect(isLlmAbort(streamed)).to.equal(true);
      expect(Date.now() - abortedAt, 'the next event (300 ms away) is not awaited').to.be.below(200);
      expect(deltas).to.have.length(1);
    });

    it('reports malformed JSON as PROVIDER_BAD_RESPONSE, streamed or not', async () => {
      fake.malformed = true;
      expect(await failure(make().complete(ask(subject.model)))).to.include({ code: 'PROVIDER_BAD_RESPONSE', provider: subject.id });
      expect(await failure(make().complete(ask(subject.model, { stream: true })))).to.include({ code: 'PROVIDER_BAD_RESPONSE' });
    });

    it('reports an unreachable server as PROVIDER_ERROR', async () => {
      const err = await failure(make({ baseUrl: 'http://127.0.0.1:9', limits: { maxRetries: 0 } }).complete(ask(subject.model)));
      expect(err).to.include({ code: 'PROVIDER_ERROR' });
      expect(err.message).to.match(/could not be reached/);
    });

    it('lists the models the provider offers', async () => {
      const models = await make().listModels!();
      expect(models).to.deep.equal([...fake.models].sort());
    });

    it('prices with the table configuration gives (LLM_PRICES)', async () => {
      const config = loadConfig({ LLM_PRICES: JSON.stringify({ [subject.id]: { [subject.model]: { input: 1e-3, output: 2e-3, cachedInput: 0, cacheWrite: 0 } } }) });
      const result = await make({ prices: priceTable(config.LLM_PRICES) }).complete(ask(subject.model));
      const u = subject.usage;
      const expected = Math.round(((u.promptTokens - u.cachedTokens - u.cacheWriteTokens) * 1e-3 + u.completionTokens * 2e-3) * 1e12) / 1e12;
      expect(result.cost).to.equal(expected);
      expect(result.priced).to.equal(true);
    });
  });
}
