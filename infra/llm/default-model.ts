import { LLM_PROVIDER_IDS, type DefaultModel, type LlmCredentials, type LlmProviderId } from '../../ports/llm.js';

/**
 * The one rule for the model that answers when a request names none (issue 36), the same for
 * every context: the assistant, the web extension, AI flow generation, the app builder, instance
 * playbooks. What the organization or the context's variable names comes first (each context
 * applies its own before asking the gateway); else the first configured real provider in the
 * order of LLM_PROVIDER_IDS (OpenAI, Anthropic, Google, an OpenAI-compatible server) that has a
 * default model, with it; the offline provider only when there is none. So an installation with
 * OPENAI_API_KEY never answers with the offline echo by surprise, and the answer's model says who spoke.
 */

export const OFFLINE_DEFAULT: DefaultModel = { provider: 'offline', model: 'offline' };

/** Models that answer well for design, chat and titles alike; used only when the price table knows them (so they are priced). */
const PREFERRED_MODELS: Partial<Record<LlmProviderId, string>> = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-0', google: 'gemini-2.0-flash' };

/**
 * A provider's default model: the preferred one when the catalogue holds it, else the catalogue's
 * first; null when the catalogue is empty (an OpenAI-compatible server serves whatever it was
 * started with, so only a name can choose).
 */
export function defaultModelOf(catalogue: (provider: LlmProviderId) => { models: string[] }, provider: LlmProviderId): string | null {
  if (provider === 'offline') return OFFLINE_DEFAULT.model;
  const { models } = catalogue(provider);
  const preferred = PREFERRED_MODELS[provider];
  return (preferred && models.includes(preferred) ? preferred : models[0]) ?? null;
}

export function defaultModelAmong(catalogue: (provider: LlmProviderId) => { models: string[] }, credentials: LlmCredentials): DefaultModel {
  for (const provider of LLM_PROVIDER_IDS) {
    if (provider === 'offline' || !credentials.byProvider[provider]) continue;
    const model = defaultModelOf(catalogue, provider);
    if (model) return { provider, model };
  }
  return OFFLINE_DEFAULT;
}
