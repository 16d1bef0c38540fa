import { expect } from 'chai';
import { LLM_PROVIDER_MODELS } from '../../domain/flows/llm-catalogue.js';
import { loadConfig } from '../../infra/config/index.js';
import { DEFAULT_PRICES, PriceConfigError, charge, costOf, priceOf, priceTable } from '../../infra/llm/prices.js';
import type { LlmUsage } from '../../ports/llm.js';

const usage = (over: Partial<LlmUsage>): LlmUsage => ({ promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 0, ...over });

describe('LLM price table', () => {
  it('prices every model the flow catalogue lets an llm node name', () => {
    for (const [provider, models] of Object.entries(LLM_PROVIDER_MODELS)) {
      for (const model of models ?? []) expect(priceOf(DEFAULT_PRICES, provider as keyof typeof DEFAULT_PRICES, model), `${provider}/${model}`).to.not.equal(null);
    }
  });

  it('bills cached input at the cached rate (OpenAI: cached is a subset of prompt)', () => {
    // gpt-4o: 2.5 / 10 / 1.25 USD per million
    const cost = costOf(usage({ promptTokens: 1000, cachedTokens: 400, completionTokens: 200 }), DEFAULT_PRICES.openai['gpt-4o']);
    expect(cost).to.equal(0.004); // 600·2.5e-6 + 400·1.25e-6 + 200·1e-5
  });

  it('bills cache reads and cache writes at their own rates (Anthropic)', () => {
    // claude-sonnet-4-0: 3 / 15, read 0.3, write 3.75 USD per million; prompt = 100 plain + 700 read + 200 written
    const cost = costOf(usage({ promptTokens: 1000, cachedTokens: 700, cacheWriteTokens: 200, completionTokens: 50 }), DEFAULT_PRICES.anthropic['claude-sonnet-4-0']);
    expect(cost).to.equal(0.00201);
  });

  it('falls back to the input rate when a model has no cached price, and costs 0 without a price', () => {
    expect(costOf(usage({ promptTokens: 10, cachedTokens: 10 }), { input: 1, output: 2 })).to.equal(10);
    expect(costOf(usage({ promptTokens: 10, cacheWriteTokens: 4 }), { input: 1, output: 2, cacheWrite: 3 })).to.equal(6 + 12);
    expect(costOf(usage({ promptTokens: 1000, completionTokens: 1000 }), null)).to.equal(0);
    expect(charge(DEFAULT_PRICES, 'openai', usage({ promptTokens: 5 }), 'no-such-model')).to.deep.equal({ cost: 0, priced: false });
  });

  it('prices by the first model the table knows (the one asked for, else the snapshot that answered)', () => {
    const u = usage({ promptTokens: 1_000_000 });
    expect(charge(DEFAULT_PRICES, 'openai', u, 'gpt-4o-2024-08-06', 'gpt-4o')).to.deep.equal({ cost: 2.5, priced: true });
  });

  it('merges LLM_PRICES over the defaults field by field, and adds models', () => {
    const config = loadConfig({ LLM_PRICES: JSON.stringify({ openai: { 'gpt-4o': { output: 0.001 }, 'my-model': { input: 1e-6, output: 2e-6 } }, openai_compatible: { 'llama3.1:8b': { input: 0, output: 1e-7 } } }) });
    const table = priceTable(config.LLM_PRICES);
    expect(table.openai['gpt-4o']).to.deep.equal({ ...DEFAULT_PRICES.openai['gpt-4o'], output: 0.001 });
    expect(table.openai['my-model']).to.deep.equal({ input: 1e-6, output: 2e-6 });
    expect(table.openai_compatible['llama3.1:8b'].output).to.equal(1e-7);
    expect(DEFAULT_PRICES.openai['gpt-4o'].output, 'defaults untouched').to.equal(10 / 1e6);
    expect(priceTable(config.LLM_PRICES), 'memoised').to.equal(table);
    expect(priceTable(undefined)).to.equal(DEFAULT_PRICES);
  });

  it('refuses overrides that would silently bill wrong', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ mistral: { m: { input: 1, output: 1 } } }, /unknown provider "mistral"/],
      [{ openai: { 'gpt-4o': { input: -1 } } }, /openai\.gpt-4o\.input must be a non-negative number/],
      [{ openai: { 'gpt-4o': { input: '1' } } }, /must be a non-negative number/],
      [{ openai: { 'gpt-4o': { inputs: 1 } } }, /openai\.gpt-4o\.inputs is not one of/],
      [{ openai: { 'new-model': { input: 1 } } }, /new model: give at least input and output/],
      [{ offline: { x: { input: 1, output: 1 } } }, /always free/],
      [{ openai: [] }, /must be an object of models/],
    ];
    for (const [overrides, message] of bad) {
      expect(() => priceTable(overrides as never), JSON.stringify(overrides)).to.throw(PriceConfigError, message);
    }
  });
});
