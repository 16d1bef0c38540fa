/**
 * The LLM port: one way to put messages to a model and get text, usage and cost back, whatever
 * the provider. Adapters live in infra/llm/ (OpenAI-compatible, Anthropic, Gemini, offline);
 * `LlmGateway` (below; infra/llm/registry.ts, wired by the container) picks one with the caller's
 * credentials. Budgets are not the gateway's business: commands/orgs-budget.ts decides them.
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
 * - Tools (optional for callers): `tools` and `toolChoice` offer functions; the answer's
 *   `toolCalls` are the calls the model made (`finishReason: 'tool_calls'`), streamed through
 *   `onToolCallDelta` (first delta of a call carries its id and name, then pieces of its JSON
 *   arguments). A later request gives the calls back on the assistant message (`toolCalls`) and
 *   their results on the next user message (`toolResults`). `stopSequences` end the answer early
 *   (`stopSequence` says which one, when the provider tells).
 */
export { LlmAbortError, LlmProviderError, isLlmAbort, isLlmProviderError, type LlmErrorCode } from './llm-errors.js';
export { isMediaPart, type LlmContentRefusal, type LlmMediaPart, type LlmMediaSource, type LlmPart, type LlmThinkingConfig, type LlmThinkingDelta, type LlmThinkingPart } from './llm-content.js';
import type { LlmContentRefusal, LlmPart, LlmThinkingConfig, LlmThinkingDelta, LlmThinkingPart } from './llm-content.js';

export const LLM_PROVIDER_IDS = ['openai', 'anthropic', 'google', 'openai_compatible', 'offline'] as const;
export type LlmProviderId = (typeof LLM_PROVIDER_IDS)[number];

export type LlmRole = 'system' | 'user' | 'assistant';

export interface LlmMessage {
  role: LlmRole;
  content: string;
  /** Assistant messages: the tools the model called in that turn (after its text). */
  toolCalls?: LlmToolCall[];
  /** User messages: results of the previous turn's tool calls (sent before the message's text). */
  toolResults?: LlmToolResult[];
  /**
   * The content in order when it holds more than text (images, documents, thinking); `content`
   * is then its text joined. Adapters that read it: Anthropic, OpenAI-compatible, Gemini.
   */
  parts?: LlmPart[];
}

/** A function the model may call; `inputSchema` is a JSON Schema of its arguments object. */
export interface LlmTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface LlmToolCall {
  /** The provider's id of the call (generated when the provider gives none, e.g. Gemini). */
  id: string;
  name: string;
  input: Record<string, unknown>;
  /**
   * Set when the model's arguments were not a JSON object (malformed JSON, an array…): the raw
   * text as received, and `input` is `{}`. A tool loop answers such a call with an error result.
   */
  invalidArguments?: string;
}

export interface LlmToolResult {
  /** The `id` of the call this answers. */
  toolCallId: string;
  /** The tool's name; adapters that need it (Gemini) find it from the call when absent. */
  name?: string;
  content: string;
  isError?: boolean;
  /** Text and media in order, when the result holds more than text (`content` is then its text). */
  parts?: Array<LlmPart & { type: 'text' | 'image' | 'document' }>;
}

/** `auto`: the model decides; `any`: it must call some tool; `none`: no tool; `tool`: that one. */
export type LlmToolChoice = { type: 'auto' } | { type: 'any' } | { type: 'none' } | { type: 'tool'; name: string };

/** A piece of a streamed tool call: `index` counts the answer's calls from 0. */
export interface LlmToolCallDelta {
  index: number;
  /** On the first delta of a call. */
  id?: string;
  name?: string;
  /** A piece of the arguments' JSON text (may be empty). */
  argumentsJson: string;
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
  tools?: LlmTool[];
  toolChoice?: LlmToolChoice;
  stopSequences?: string[];
  /** Called with each piece of a tool call as it streams in (only with `stream: true`). */
  onToolCallDelta?(delta: LlmToolCallDelta): void;
  /** Extended thinking, for providers that have it (Anthropic); others ignore it. */
  thinking?: LlmThinkingConfig;
  /** Called with each piece of thinking as it streams in (only with `stream: true`). */
  onThinkingDelta?(delta: LlmThinkingDelta): void;
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
  /** The calls the model made (present only when it made some). */
  toolCalls?: LlmToolCall[];
  /** Which of `stopSequences` ended the answer, when the provider says (Anthropic, offline). */
  stopSequence?: string;
  /** The model's thinking blocks (Anthropic), to be given back unchanged on the next turn. */
  thinking?: LlmThinkingPart[];
  /** The provider's final answer object (non-streaming only), for debugging; never sent to clients as is. */
  raw?: unknown;
}

export interface LlmProvider {
  readonly id: LlmProviderId;
  complete(request: LlmRequest): Promise<LlmResult>;
  /** Model ids the provider offers now, from its list endpoint; absent when it has none. */
  listModels?(signal?: AbortSignal): Promise<string[]>;
  /** The first part of the request this provider cannot take (an image, a PDF…), checked before any call; null when it takes all. */
  unsupported?(request: LlmRequest): LlmContentRefusal | null;
  /** The provider's own count of the request's input tokens, when it has an endpoint for it (Anthropic). */
  countTokens?(request: LlmRequest): Promise<number>;
}

export const LLM_PROVIDER_NAMES: Record<LlmProviderId, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  google: 'Google Gemini',
  openai_compatible: 'OpenAI-compatible server (vLLM, llama.cpp, Ollama)',
  offline: 'Offline (deterministic, no network; for tests, demos and dry runs)',
};

/**
 * Whose credentials: the principal's active organization, or null for the personal workspace;
 * `userId` (optional) is the user whose own credentials apply in the personal workspace.
 */
export interface LlmCaller {
  orgId: string | null;
  userId?: string | null;
}

export type CredentialSource = 'organization' | 'user' | 'environment' | 'builtin';

export interface ResolvedCredential {
  apiKey: string | null;
  baseUrl: string;
  source: CredentialSource;
}

export interface LlmCredentials {
  byProvider: Partial<Record<LlmProviderId, ResolvedCredential>>;
  /** Set when the organization's or user's credentials exist but cannot be opened (ENCRYPTION_KEY changed). */
  problem: string | null;
}

export interface LlmCallLimits {
  timeoutMs: number;
  maxRetries: number;
}

export interface ProviderModels {
  id: LlmProviderId;
  configured: boolean;
  /** `provider`: its list endpoint answered; `price_table`: not configured or the list call failed; `builtin`: offline. */
  source: 'provider' | 'price_table' | 'builtin';
  models: string[];
  anyModel: boolean;
  /** Why the provider's own list is not shown, when it was asked and failed. */
  error?: string;
}

/**
 * What commands, consumers and routes use to reach a model: the provider with the caller's
 * credentials (organization in its workspace, else the user's own, else the service's), and the
 * catalogue of known models.
 */
export interface LlmGateway {
  credentials(caller: LlmCaller): Promise<LlmCredentials>;
  /**
   * Throws LlmProviderError PROVIDER_NOT_CONFIGURED when no credential covers `provider`. Pass
   * `credentials` when they were already read for this request.
   */
  providerFor(caller: LlmCaller, provider: LlmProviderId, options?: { credentials?: LlmCredentials; limits?: Partial<LlmCallLimits> }): Promise<LlmProvider>;
  listModels(caller: LlmCaller, only?: readonly LlmProviderId[]): Promise<ProviderModels[]>;
  /** Models known without asking the provider (the price table); `anyModel` providers accept any name. */
  catalogue(provider: LlmProviderId): { models: string[]; anyModel: boolean };
  isKnownModel(provider: LlmProviderId, model: string): boolean;
  /**
   * The model that answers when a request names none, the same rule in every context (issue 36):
   * the first real provider the caller's credentials cover (OpenAI, Anthropic, Google,
   * OpenAI-compatible) that has a default model, with it; offline only when none does. The
   * organization's or the context's own setting, when it names one, comes before this.
   */
  defaultModel(caller: LlmCaller, options?: { credentials?: LlmCredentials }): Promise<DefaultModel>;
  /** The model of `provider` used when a request names none (a priced model); null when only a name can choose (an OpenAI-compatible server). */
  defaultModelOf(provider: LlmProviderId): string | null;
}

export interface DefaultModel {
  provider: LlmProviderId;
  model: string;
}

/** A credential as stored (organization's or user's), already opened. */
export interface StoredLlmCredential {
  provider: string;
  apiKey: string;
  baseUrl: string | null;
  updatedAt: string;
}

/**
 * The gateway's read-side lookups, implemented by the query functions of
 * projections/orgs-queries.ts and projections/users-llm-credentials.ts, wired in the container.
 * Either may throw when a sealed key cannot be opened.
 */
export interface LlmCredentialLookup {
  organization(orgId: string): Promise<StoredLlmCredential[]>;
  user(userId: string): Promise<StoredLlmCredential[]>;
}
