import type { Config } from '../config/index.js';
import type { Logger } from '../../ports/logger.js';
import {
  LLM_PROVIDER_IDS,
  LLM_PROVIDER_NAMES,
  type LlmCaller,
  type LlmCallLimits,
  type LlmCredentialLookup,
  type LlmCredentials,
  type LlmGateway,
  type LlmProvider,
  type LlmProviderId,
  type ProviderModels,
  type ResolvedCredential,
  type StoredLlmCredential,
} from '../../ports/llm.js';
import { createAnthropicProvider } from './anthropic.js';
import { defaultModelAmong, defaultModelOf } from './default-model.js';
import { LlmProviderError, notConfigured } from './errors.js';
import { createGeminiProvider } from './gemini.js';
import type { AdapterSettings, HttpLimits } from './http.js';
import { createOfflineProvider } from './offline.js';
import { createOpenAiCompatibleProvider } from './openai-compatible.js';
import { priceTable, pricedModels } from './prices.js';

/**
 * Picks the adapter and the credentials for a caller. Order per provider: in an organization's
 * workspace the organization's credential (PUT /orgs/{orgId}/llm-credentials), in the personal
 * workspace the user's own (PUT /users/me/llm-credentials); then the service-wide one from the
 * environment. A user's own key is never used for organization work: the organization's budget
 * and audit cover what its members spend there. The offline provider is used only when it is asked for by name: a request for
 * a real provider without credentials fails with PROVIDER_NOT_CONFIGURED, never with a fake answer.
 */

const present = (value: string | undefined | null): value is string => typeof value === 'string' && value.trim() !== '';

function environmentCredential(config: Config, provider: LlmProviderId): ResolvedCredential | null {
  switch (provider) {
    case 'openai':
      return present(config.OPENAI_API_KEY) ? { apiKey: config.OPENAI_API_KEY, baseUrl: config.OPENAI_BASE_URL, source: 'environment' } : null;
    case 'anthropic':
      return present(config.ANTHROPIC_API_KEY) ? { apiKey: config.ANTHROPIC_API_KEY, baseUrl: config.ANTHROPIC_BASE_URL, source: 'environment' } : null;
    case 'google':
      return present(config.GEMINI_API_KEY) ? { apiKey: config.GEMINI_API_KEY, baseUrl: config.GEMINI_BASE_URL, source: 'environment' } : null;
    case 'openai_compatible':
      // No service-wide variable exists for it yet; OPENAI_BASE_URL can point `openai` at such a server.
      return null;
    case 'offline':
      return { apiKey: null, baseUrl: '', source: 'builtin' };
  }
}

/** A stored (organization or user) credential keeps the service's base URL for the provider unless it names its own. */
function storedCredential(config: Config, provider: LlmProviderId, stored: StoredLlmCredential, source: 'organization' | 'user'): ResolvedCredential {
  const defaults: Partial<Record<LlmProviderId, string>> = { openai: config.OPENAI_BASE_URL, anthropic: config.ANTHROPIC_BASE_URL, google: config.GEMINI_BASE_URL };
  return { apiKey: present(stored.apiKey) ? stored.apiKey : null, baseUrl: stored.baseUrl ?? defaults[provider] ?? '', source };
}

/** What the registry needs: configuration, the credential lookups (a port) and a logger for unreadable keys. */
export interface LlmRegistryDeps {
  config: Config;
  credentials: LlmCredentialLookup;
  logger?: Logger;
}

/** The organization's credentials in its workspace, else the user's own; never both. */
async function storedCredentials(deps: LlmRegistryDeps, caller: LlmCaller): Promise<{ stored: StoredLlmCredential[]; source: 'organization' | 'user'; problem: string | null }> {
  const source = caller.orgId ? 'organization' : 'user';
  try {
    if (caller.orgId) return { stored: await deps.credentials.organization(caller.orgId), source, problem: null };
    if (caller.userId) return { stored: await deps.credentials.user(caller.userId), source, problem: null };
    return { stored: [], source, problem: null };
  } catch (err) {
    const whose = caller.orgId ? "the organization's" : 'your own';
    deps.logger?.warn({ orgId: caller.orgId, userId: caller.userId ?? null, err: (err as Error).message }, `${source} LLM credentials unreadable`);
    return { stored: [], source, problem: `${whose} LLM credentials cannot be read (if ENCRYPTION_KEY changed, set them again)` };
  }
}

async function llmCredentials(deps: LlmRegistryDeps, caller: LlmCaller): Promise<LlmCredentials> {
  const { stored, source, problem } = await storedCredentials(deps, caller);
  const byProvider: LlmCredentials['byProvider'] = {};
  for (const provider of LLM_PROVIDER_IDS) {
    const own = stored.find((c) => c.provider === provider);
    // Unreadable stored credentials must not quietly turn into spending the service's key.
    const credential = own ? storedCredential(deps.config, provider, own, source) : problem && provider !== 'offline' ? null : environmentCredential(deps.config, provider);
    if (credential && (credential.baseUrl || provider === 'offline')) byProvider[provider] = credential;
  }
  return { byProvider, problem };
}

export function httpLimits(config: Config): HttpLimits {
  return { timeoutMs: config.LLM_TIMEOUT_MS, maxRetries: config.LLM_MAX_RETRIES };
}

/** An adapter for explicit settings; the registry's own entry point is `providerFor`. */
export function createLlmProvider(provider: LlmProviderId, settings: AdapterSettings): LlmProvider {
  switch (provider) {
    case 'openai':
    case 'openai_compatible':
      return createOpenAiCompatibleProvider(provider, settings);
    case 'anthropic':
      return createAnthropicProvider(settings);
    case 'google':
      return createGeminiProvider(settings);
    case 'offline':
      return createOfflineProvider();
  }
}

async function llmProviderFor(
  deps: LlmRegistryDeps,
  caller: LlmCaller,
  provider: LlmProviderId,
  options: { credentials?: LlmCredentials; limits?: Partial<LlmCallLimits> } = {},
): Promise<LlmProvider> {
  const credentials = options.credentials ?? (await llmCredentials(deps, caller));
  const credential = credentials.byProvider[provider];
  if (!credential) {
    const where = caller.orgId ? 'neither the organization (PUT /api/orgs/{orgId}/llm-credentials) nor the service' : 'neither your profile (PUT /api/users/me/llm-credentials) nor the service';
    throw notConfigured(provider, credentials.problem ?? `${LLM_PROVIDER_NAMES[provider]} is not configured: ${where} has an API key for it`);
  }
  return createLlmProvider(provider, {
    apiKey: credential.apiKey,
    baseUrl: credential.baseUrl,
    limits: { ...httpLimits(deps.config), ...options.limits },
    prices: priceTable(deps.config.LLM_PRICES),
  });
}

/**
 * Models a provider is known to offer without asking it: the price table's (with LLM_PRICES).
 * `anyModel` providers (offline, OpenAI-compatible servers) accept whatever name they are given.
 */
export function catalogueOf(config: Config, provider: LlmProviderId): { models: string[]; anyModel: boolean } {
  const anyModel = provider === 'offline' || provider === 'openai_compatible';
  return { models: pricedModels(priceTable(config.LLM_PRICES), provider), anyModel };
}

export function isKnownModel(config: Config, provider: LlmProviderId, model: string): boolean {
  const { models, anyModel } = catalogueOf(config, provider);
  return anyModel || models.includes(model);
}

/** A model list should not hold a page for a minute: one quick attempt, then the price table. */
const LIST_TIMEOUT_MS = 10_000;

async function listModelsPerProvider(deps: LlmRegistryDeps, caller: LlmCaller, only: readonly LlmProviderId[] = LLM_PROVIDER_IDS): Promise<ProviderModels[]> {
  const credentials = await llmCredentials(deps, caller);
  return Promise.all(
    only.map(async (id): Promise<ProviderModels> => {
      const { models, anyModel } = catalogueOf(deps.config, id);
      const configured = Boolean(credentials.byProvider[id]);
      if (id === 'offline') return { id, configured, source: 'builtin', models: ['offline'], anyModel };
      if (!configured) return { id, configured, source: 'price_table', models, anyModel };
      try {
        const limits = { timeoutMs: Math.min(deps.config.LLM_TIMEOUT_MS, LIST_TIMEOUT_MS), maxRetries: 0 };
        const provider = await llmProviderFor(deps, caller, id, { credentials, limits });
        if (!provider.listModels) return { id, configured, source: 'price_table', models, anyModel };
        return { id, configured, source: 'provider', models: await provider.listModels(), anyModel };
      } catch (err) {
        const message = err instanceof LlmProviderError ? err.message : 'the model list could not be read';
        return { id, configured, source: 'price_table', models, anyModel, error: message };
      }
    }),
  );
}

/** The LLM port's adapter: what the container hands to commands, consumers and routes. */
export function createLlmRegistry(deps: LlmRegistryDeps): LlmGateway {
  return {
    credentials: (caller) => llmCredentials(deps, caller),
    providerFor: (caller, provider, options) => llmProviderFor(deps, caller, provider, options),
    listModels: (caller, only) => listModelsPerProvider(deps, caller, only),
    catalogue: (provider) => catalogueOf(deps.config, provider),
    isKnownModel: (provider, model) => isKnownModel(deps.config, provider, model),
    defaultModel: async (caller, options = {}) => defaultModelAmong((p) => catalogueOf(deps.config, p), options.credentials ?? (await llmCredentials(deps, caller))),
    defaultModelOf: (provider) => defaultModelOf((p) => catalogueOf(deps.config, p), provider),
  };
}
