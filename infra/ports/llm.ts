/**
 * The LLM port: one way to put messages to a model and get text, usage and cost back, whatever
 * the provider. Adapters live in infra/llm/ (OpenAI-compatible, Anthropic, Gemini, offline);
 * `llmProviderFor` in infra/llm/registry.ts picks one with the caller's credentials.
 *
 * Contract every adapter keeps (test/contract/llm.test.ts runs it against each):
 * - `usage` comes from the provider's answer, normalised: `promptTokens` is every input token
 *   (including cached and cache-write ones), `cachedTokens` and `cacheWriteTokens` are subsets of
 *   it, `totalTokens = promptTokens + completionTokens` unless the provider reports more
 *   (e.g. Gemini's thinking tokens, counted as completion).
 * - `cost` is US dollars from the price table (infra/llm/prices.ts, overridable by LLM_PRICES):
 *   uncached input at `input`, cached at `cachedInput`, cache writes at `cacheWrite`, output at
 *   `output`. A model missing from the table costs 0 with `priced: false`.
 * - Failures throw `LlmProviderError` (code PROVIDER_ERROR | PROVIDER_TIMEOUT |
 *   PROVIDER_RATE_LIMITED | PROVIDER_BAD_RESPONSE | PROVIDER_NOT_CONFIGURED) after the retries
 *   that were worth making (429 and 5xx, honouring Retry-After, at most LLM_MAX_RETRIES, all
 *   within LLM_TIMEOUT_MS). Aborting `signal` rejects promptly with `LlmAbortError`
 *   (`name === 'AbortError'`, `isLlmAbort(err)`), never with a provider error.
 * - With `stream: true` the text arrives through `onDelta` as it is generated; the promise
 *   still resolves with the whole text and the final usage.
 */
export { LlmAbortError, LlmProviderError, isLlmAbort, isLlmProviderError, type LlmErrorCode } from '../llm/errors.js';

export const LLM_PROVIDER_IDS = ['openai', 'anthropic', 'google', 'openai_compatible', 'offline'] as const;
export type LlmProviderId = (typeof LLM_PROVIDER_IDS)[number];

export type LlmRole = 'system' | 'user' | 'assistant';

export interface LlmMessage {
  role: LlmRole;
  content: string;
}

export interface LlmRequest {
  model: string;
  /** System messages are sent the way each provider wants them (Anthropic `system`, Gemini `systemInstruction`). */
  messages: LlmMessage[];
  temperature?: number;
  /** Upper bound on generated tokens; Anthropic requires one, so its adapter defaults to 4096. */
  maxTokens?: number;
  /** Aborting rejects with LlmAbortError and cancels the HTTP request. */
  signal?: AbortSignal;
  stream?: boolean;
  /** Called with each piece of text as it streams in (only with `stream: true`). */
  onDelta?(text: string): void;
}

export interface LlmUsage {
  /** All input tokens, cached and cache-write ones included. */
  promptTokens: number;
  completionTokens: number;
  /** Input tokens read from the provider's prompt cache (subset of promptTokens). */
  cachedTokens: number;
  /** Input tokens written to the provider's prompt cache (subset of promptTokens; Anthropic). */
  cacheWriteTokens: number;
  totalTokens: number;
}

/** Normalised; the provider's own word is in `raw` when that was kept. */
export type LlmFinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls' | 'other';

export interface LlmResult {
  text: string;
  usage: LlmUsage;
  /** US dollars. */
  cost: number;
  /** False when the model has no entry in the price table (cost is then 0, not a guess). */
  priced: boolean;
  /** The model that answered, as the provider named it (may be a dated snapshot of the one asked for). */
  model: string;
  provider: LlmProviderId;
  finishReason: LlmFinishReason;
  /** The provider's final answer object (non-streaming only), for debugging; never sent to clients as is. */
  raw?: unknown;
}

export interface LlmProvider {
  readonly id: LlmProviderId;
  complete(request: LlmRequest): Promise<LlmResult>;
  /** Model ids the provider offers now, from its list endpoint; absent when it has none. */
  listModels?(signal?: AbortSignal): Promise<string[]>;
}
