import { periodStartOf } from '../../domain/orgs/spend.js';
import { DomainError } from '../../domain/shared/decider.js';
import { getOrg, readOrgLlmCredentials, spentUsd, type OrgLlmCredential } from '../../projections/orgs-queries.js';
import { readUserLlmCredentials } from '../../projections/users-llm-credentials.js';
import type { Config } from '../config.js';
import type { Logger } from '../ports/logger.js';
import { LLM_PROVIDER_IDS, type LlmProvider, type LlmProviderId } from '../ports/llm.js';
import type { ReadStore } from '../ports/read-store.js';
import { createAnthropicProvider } from './anthropic.js';
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

export const LLM_PROVIDER_NAMES: Record<LlmProviderId, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  google: 'Google Gemini',
  openai_compatible: 'OpenAI-compatible server (vLLM, llama.cpp, Ollama)',
  offline: 'Offline (deterministic, no network; for tests, demos and dry runs)',
};

/** What the registry reads; `Services` satisfies it. */
export interface LlmServices {
  config: Config;
  readStore: ReadStore;
  sealedBox: { open(sealed: string): string };
  logger?: Logger;
}

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
function storedCredential(config: Config, provider: LlmProviderId, stored: OrgLlmCredential, source: 'organization' | 'user'): ResolvedCredential {
  const defaults: Partial<Record<LlmProviderId, string>> = { openai: config.OPENAI_BASE_URL, anthropic: config.ANTHROPIC_BASE_URL, google: config.GEMINI_BASE_URL };
  return { apiKey: present(stored.apiKey) ? stored.apiKey : null, baseUrl: stored.baseUrl ?? defaults[provider] ?? '', source };
}

/** The organization's credentials in its workspace, else the user's own; never both. */
async function storedCredentials(services: LlmServices, caller: LlmCaller): Promise<{ stored: OrgLlmCredential[]; source: 'organization' | 'user'; problem: string | null }> {
  const source = caller.orgId ? 'organization' : 'user';
  try {
    if (caller.orgId) return { stored: await readOrgLlmCredentials(services, caller.orgId), source, problem: null };
    if (caller.userId) return { stored: await readUserLlmCredentials(services, caller.userId), source, problem: null };
    return { stored: [], source, problem: null };
  } catch (err) {
    const whose = caller.orgId ? "the organization's" : 'your own';
    services.logger?.warn({ orgId: caller.orgId, userId: caller.userId ?? null, err: (err as Error).message }, `${source} LLM credentials unreadable`);
    return { stored: [], source, problem: `${whose} LLM credentials cannot be read (if ENCRYPTION_KEY changed, set them again)` };
  }
}

export async function llmCredentials(services: LlmServices, caller: LlmCaller): Promise<LlmCredentials> {
  const { stored, source, problem } = await storedCredentials(services, caller);
  const byProvider: LlmCredentials['byProvider'] = {};
  for (const provider of LLM_PROVIDER_IDS) {
    const own = stored.find((c) => c.provider === provider);
    // Unreadable stored credentials must not quietly turn into spending the service's key.
    const credential = own ? storedCredential(services.config, provider, own, source) : problem && provider !== 'offline' ? null : environmentCredential(services.config, provider);
    if (credential && (credential.baseUrl || provider === 'offline')) byProvider[provider] = credential;
  }
  return { byProvider, problem };
}

export function httpLimits(config: Config): HttpLimits {
  return { timeoutMs: config.LLM_TIMEOUT_MS, maxRetries: config.LLM_MAX_RETRIES };
}

/** An adapter for explicit settings; the registry's own entry point is `llmProviderFor`. */
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

/**
 * The provider `provider` with the caller's credentials, ready to `complete()`. Throws
 * LlmProviderError PROVIDER_NOT_CONFIGURED when neither the organization (or, in the personal
 * workspace, the user) nor the environment has a key for it. Pass `credentials` when they were already read for this request.
 */
export async function llmProviderFor(
  services: LlmServices,
  caller: LlmCaller,
  provider: LlmProviderId,
  options: { credentials?: LlmCredentials; limits?: Partial<HttpLimits> } = {},
): Promise<LlmProvider> {
  const credentials = options.credentials ?? (await llmCredentials(services, caller));
  const credential = credentials.byProvider[provider];
  if (!credential) {
    const where = caller.orgId ? 'neither the organization (PUT /api/orgs/{orgId}/llm-credentials) nor the service' : 'neither your profile (PUT /api/users/me/llm-credentials) nor the service';
    throw notConfigured(provider, credentials.problem ?? `${LLM_PROVIDER_NAMES[provider]} is not configured: ${where} has an API key for it`);
  }
  return createLlmProvider(provider, {
    apiKey: credential.apiKey,
    baseUrl: credential.baseUrl,
    limits: { ...httpLimits(services.config), ...options.limits },
    prices: priceTable(services.config.LLM_PRICES),
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

/** A model list should not hold a page for a minute: one quick attempt, then the price table. */
const LIST_TIMEOUT_MS = 10_000;

export async function listModelsPerProvider(services: LlmServices, caller: LlmCaller, only: readonly LlmProviderId[] = LLM_PROVIDER_IDS): Promise<ProviderModels[]> {
  const credentials = await llmCredentials(services, caller);
  return Promise.all(
    only.map(async (id): Promise<ProviderModels> => {
      const { models, anyModel } = catalogueOf(services.config, id);
      const configured = Boolean(credentials.byProvider[id]);
      if (id === 'offline') return { id, configured, source: 'builtin', models: ['offline'], anyModel };
      if (!configured) return { id, configured, source: 'price_table', models, anyModel };
      try {
        const limits = { timeoutMs: Math.min(services.config.LLM_TIMEOUT_MS, LIST_TIMEOUT_MS), maxRetries: 0 };
        const provider = await llmProviderFor(services, caller, id, { credentials, limits });
        if (!provider.listModels) return { id, configured, source: 'price_table', models, anyModel };
        return { id, configured, source: 'provider', models: await provider.listModels(), anyModel };
      } catch (err) {
        const message = err instanceof LlmProviderError ? err.message : 'the model list could not be read';
        return { id, configured, source: 'price_table', models, anyModel, error: message };
      }
    }),
  );
}

/**
 * 402 BUDGET_EXCEEDED when the organization has spent its monthly limit (UTC calendar month):
 * call it before any paid provider call. The offline provider costs nothing and stays usable,
 * so an organization over budget can still dry-run its flows.
 */
export async function assertWithinBudget(services: Pick<LlmServices, 'readStore'> & { now(): Date }, caller: LlmCaller, provider: LlmProviderId): Promise<void> {
  if (!caller.orgId || provider === 'offline') return;
  const org = await getOrg(services.readStore, caller.orgId);
  const limitUsd = org?.budgetLimitUsd ?? null;
  if (limitUsd === null) return;
  const period = periodStartOf(services.now()).slice(0, 7);
  const spent = await spentUsd(services.readStore, caller.orgId, period);
  if (spent >= limitUsd) {
    throw new DomainError('BUDGET_EXCEEDED', `the organization has spent ${spent} of its ${limitUsd} USD LLM budget for ${period}`, 'payment_required', { limitUsd, spentUsd: spent, period });
  }
}
