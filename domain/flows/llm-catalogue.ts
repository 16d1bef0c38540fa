/**
 * The LLM providers and models an `llm` node may name. `null` means "any model name": the
 * offline provider is deterministic and ignores it, and an OpenAI-compatible endpoint (vLLM,
 * llama.cpp, Ollama) serves whatever its operator loaded. The execution context may extend this
 * list (and keeps its price table beside it); a node naming something else is refused at save time.
 */
export const LLM_PROVIDER_MODELS = {
  openai: ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'o3-mini'],
  anthropic: ['claude-3-5-sonnet-latest', 'claude-3-5-haiku-latest', 'claude-sonnet-4-0'],
  google: ['gemini-1.5-pro', 'gemini-1.5-flash', 'gemini-2.0-flash'],
  openai_compatible: null,
  offline: null,
} as const satisfies Record<string, readonly string[] | null>;

export type KnownLlmProvider = keyof typeof LLM_PROVIDER_MODELS;
export const KNOWN_LLM_PROVIDERS = Object.keys(LLM_PROVIDER_MODELS) as [KnownLlmProvider, ...KnownLlmProvider[]];

export function isKnownProvider(provider: unknown): provider is KnownLlmProvider {
  return typeof provider === 'string' && Object.hasOwn(LLM_PROVIDER_MODELS, provider);
}

/** Models of a provider, or null when it accepts any model name. */
export function modelsOf(provider: KnownLlmProvider): readonly string[] | null {
  return LLM_PROVIDER_MODELS[provider];
}

export function isKnownModel(provider: unknown, model: unknown): boolean {
  if (!isKnownProvider(provider) || typeof model !== 'string' || model.trim() === '') return false;
  const models = modelsOf(provider);
  return models === null || models.includes(model);
}
