import type { LlmProviderId, LlmUsage } from '../../ports/llm.js';

/** US dollars per token. Missing `cachedInput` / `cacheWrite` fall back to `input`. */
export interface ModelPrice {
  input: number;
  output: number;
  cachedInput?: number;
  cacheWrite?: number;
}

export type PriceTable = Record<LlmProviderId, Record<string, ModelPrice>>;

const perMillion = (input: number, output: number, cachedInput?: number, cacheWrite?: number): ModelPrice => ({
  input: input / 1e6,
  output: output / 1e6,
  ...(cachedInput !== undefined && { cachedInput: cachedInput / 1e6 }),
  ...(cacheWrite !== undefined && { cacheWrite: cacheWrite / 1e6 }),
});

/**
 * List prices (standard tier, short contexts) as published by each provider; they change, so
 * operators override them with LLM_PRICES rather than waiting for a release. Every model of
 * domain/flows/llm-catalogue.ts is here (a unit test keeps it so). Self-hosted OpenAI-compatible
 * servers cost nothing unless configured; the offline provider is always free.
 */
export const DEFAULT_PRICES: PriceTable = {
  openai: {
    'gpt-4o': perMillion(2.5, 10, 1.25),
    'gpt-4o-mini': perMillion(0.15, 0.6, 0.075),
    'gpt-4.1': perMillion(2, 8, 0.5),
    'gpt-4.1-mini': perMillion(0.4, 1.6, 0.1),
    'o3-mini': perMillion(1.1, 4.4, 0.55),
  },
  anthropic: {
    'claude-3-5-sonnet-latest': perMillion(3, 15, 0.3, 3.75),
    'claude-3-5-haiku-latest': perMillion(0.8, 4, 0.08, 1),
    'claude-sonnet-4-0': perMillion(3, 15, 0.3, 3.75),
  },
  google: {
    'gemini-1.5-pro': perMillion(1.25, 5, 0.3125),
    'gemini-1.5-flash': perMillion(0.075, 0.3, 0.01875),
    'gemini-2.0-flash': perMillion(0.1, 0.4, 0.025),
  },
  openai_compatible: {},
  offline: {},
};

const PRICE_FIELDS = ['input', 'output', 'cachedInput', 'cacheWrite'] as const;

export class PriceConfigError extends Error {
  constructor(message: string) {
    super(`LLM_PRICES: ${message}`);
    this.name = 'PriceConfigError';
  }
}

const cache = new WeakMap<object, PriceTable>();

/**
 * The default table with `overrides` (config.LLM_PRICES) merged in field by field: an override
 * may change one price of a known model or add a model. Bad entries throw PriceConfigError
 * naming the entry, so a typo is not silently billed as zero. Memoised per overrides object.
 */
export function priceTable(overrides: Record<string, Record<string, Record<string, number>>> | undefined): PriceTable {
  if (!overrides) return DEFAULT_PRICES;
  const cached = cache.get(overrides);
  if (cached) return cached;
  const table = Object.fromEntries(Object.entries(DEFAULT_PRICES).map(([p, models]) => [p, { ...models }])) as PriceTable;
  if (typeof overrides !== 'object' || Array.isArray(overrides)) throw new PriceConfigError('must be a JSON object of providers');
  for (const [provider, models] of Object.entries(overrides)) {
    if (!Object.hasOwn(table, provider)) throw new PriceConfigError(`unknown provider ${JSON.stringify(provider)} (known: ${Object.keys(table).join(', ')})`);
    if (provider === 'offline') throw new PriceConfigError('the offline provider is always free');
    if (!models || typeof models !== 'object' || Array.isArray(models)) throw new PriceConfigError(`${provider} must be an object of models`);
    for (const [model, price] of Object.entries(models)) {
      if (!price || typeof price !== 'object' || Array.isArray(price)) throw new PriceConfigError(`${provider}.${model} must be an object of prices`);
      for (const [field, value] of Object.entries(price)) {
        if (!(PRICE_FIELDS as readonly string[]).includes(field)) throw new PriceConfigError(`${provider}.${model}.${field} is not one of ${PRICE_FIELDS.join(', ')}`);
        if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new PriceConfigError(`${provider}.${model}.${field} must be a non-negative number (USD per token)`);
      }
      const merged = { ...table[provider as LlmProviderId][model], ...price } as Partial<ModelPrice>;
      if (merged.input === undefined || merged.output === undefined) throw new PriceConfigError(`${provider}.${model} is a new model: give at least input and output`);
      table[provider as LlmProviderId][model] = merged as ModelPrice;
    }
  }
  cache.set(overrides, table);
  return table;
}

export function priceOf(table: PriceTable, provider: LlmProviderId, ...models: string[]): ModelPrice | null {
  for (const model of models) if (Object.hasOwn(table[provider], model)) return table[provider][model];
  return null;
}

/** Models the table prices for a provider, in table order. */
export const pricedModels = (table: PriceTable, provider: LlmProviderId) => Object.keys(table[provider]);

/** USD for a normalised usage (see LlmUsage): each kind of input token at its own rate. Rounded to 1e-12 so sums do not show float noise. */
export function costOf(usage: LlmUsage, price: ModelPrice | null): number {
  if (!price) return 0;
  const cached = Math.min(usage.cachedTokens, usage.promptTokens);
  const written = Math.min(usage.cacheWriteTokens, usage.promptTokens - cached);
  const plain = usage.promptTokens - cached - written;
  const dollars =
    plain * price.input + cached * (price.cachedInput ?? price.input) + written * (price.cacheWrite ?? price.input) + usage.completionTokens * price.output;
  return Math.round(dollars * 1e12) / 1e12;
}

/** Cost of a call: priced by the model asked for, else by the one that answered (a dated snapshot may be listed). */
export function charge(table: PriceTable, provider: LlmProviderId, usage: LlmUsage, ...models: string[]): { cost: number; priced: boolean } {
  const price = priceOf(table, provider, ...models);
  return { cost: costOf(usage, price), priced: price !== null };
}
