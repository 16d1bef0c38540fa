import { extensionSettingsDecider, extensionSettingsStreamId } from '../domain/extension/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import { LLM_PROVIDER_IDS, type LlmCaller, type LlmCredentials, type LlmGateway, type LlmProviderId } from '../ports/llm.js';
import { handleAtContextTime, loadState, type CommandContext } from './handle.js';

/**
 * Which models the web extension may use: a default and an allowed list, from the organization's
 * extension settings (PUT /extension/settings, stream `extsettings-<orgId>`), else the service's
 * variables (EXTENSION_DEFAULT_MODEL, EXTENSION_ALLOWED_MODELS as `provider:model`). Without
 * either the default is the first configured provider's default model (LlmGateway.defaultModel,
 * the offline provider only when none is configured) and every model of the catalogue of the
 * providers the caller has credentials for is allowed.
 */
export interface ExtensionModelSettings {
  EXTENSION_DEFAULT_MODEL: string;
  EXTENSION_ALLOWED_MODELS: string;
}

export interface ExtensionModelPorts {
  llm: LlmGateway;
  eventStore: EventStore;
  settings: ExtensionModelSettings;
}

/** The organization's settings folded from its stream (the write side: never behind a change). */
export async function loadOrgExtensionSettings(store: EventStore, orgId: string) {
  return (await loadState(store, extensionSettingsStreamId(orgId), extensionSettingsDecider)).state;
}

export async function updateOrgExtensionSettings(
  ports: Pick<ExtensionModelPorts, 'llm' | 'eventStore'>,
  context: CommandContext,
  orgId: string,
  by: string,
  input: { defaultModel: string | null; allowedModels: string[] | null },
) {
  const check = (text: string, field: string) => {
    const ref = parseModelRef(text);
    if (!ref) throw new DomainError('INVALID_MODEL', 'models are "provider:model" (e.g. "openai:gpt-4o-mini")', 'invalid', { field });
    if (!ports.llm.isKnownModel(ref.provider, ref.model)) throw new DomainError('UNKNOWN_MODEL', `unknown model ${text}`, 'invalid', { field, known: ports.llm.catalogue(ref.provider).models });
  };
  if (input.defaultModel) check(input.defaultModel, 'body.defaultModel');
  input.allowedModels?.forEach((m, i) => check(m, `body.allowedModels.${i}`));
  return handleAtContextTime(ports.eventStore, context, extensionSettingsStreamId(orgId), extensionSettingsDecider, {
    type: 'UpdateExtensionSettings', orgId, defaultModel: input.defaultModel, allowedModels: input.allowedModels, by,
  });
}

export interface ModelRef {
  provider: LlmProviderId;
  model: string;
}

export function parseModelRef(text: string): ModelRef | null {
  const colon = text.indexOf(':');
  if (colon <= 0) return null;
  const provider = text.slice(0, colon).trim() as LlmProviderId;
  const model = text.slice(colon + 1).trim();
  if (!(LLM_PROVIDER_IDS as readonly string[]).includes(provider) || model.length === 0) return null;
  return { provider, model };
}

const sameModel = (a: ModelRef, b: ModelRef) => a.provider === b.provider && a.model === b.model;

export interface ExtensionModels {
  default: ModelRef;
  allowed: ModelRef[];
  /** Where the list came from: `organization` (its settings), `settings` (service variables) or `catalogue` (the providers the caller can use). */
  source: 'organization' | 'settings' | 'catalogue';
}

export async function extensionModels(ports: ExtensionModelPorts, caller: LlmCaller): Promise<ExtensionModels> {
  const { llm, settings } = ports;
  const org = caller.orgId ? await loadOrgExtensionSettings(ports.eventStore, caller.orgId) : null;
  const configuredDefault = (org?.defaultModel ? parseModelRef(org.defaultModel) : null) ?? (settings.EXTENSION_DEFAULT_MODEL ? parseModelRef(settings.EXTENSION_DEFAULT_MODEL) : null);
  // Read once, and only when needed: for the default when nothing names one, for the catalogue list.
  let credentials: LlmCredentials | null = null;
  const credentialsOf = async () => (credentials ??= await llm.credentials(caller));
  // Neither the organization nor the variable names one: the rule every context shares (offline only when nothing is configured).
  const fallback = configuredDefault ?? (await llm.defaultModel(caller, { credentials: await credentialsOf() }));
  if (org?.allowedModels) {
    const listed = org.allowedModels.map(parseModelRef).filter((m): m is ModelRef => m !== null);
    const allowed = listed.some((m) => sameModel(m, fallback)) ? listed : [fallback, ...listed];
    return { default: fallback, allowed, source: 'organization' };
  }
  const listed = settings.EXTENSION_ALLOWED_MODELS.split(',').map((s) => s.trim()).filter(Boolean).map(parseModelRef).filter((m): m is ModelRef => m !== null);
  if (listed.length > 0) {
    const allowed = listed.some((m) => sameModel(m, fallback)) ? listed : [fallback, ...listed];
    return { default: fallback, allowed, source: org?.defaultModel ? 'organization' : 'settings' };
  }
  const { byProvider } = await credentialsOf();
  const allowed: ModelRef[] = [fallback];
  for (const provider of LLM_PROVIDER_IDS) {
    if (!byProvider[provider]) continue;
    const { models } = llm.catalogue(provider);
    for (const model of provider === 'offline' ? ['offline'] : models) {
      const ref = { provider, model };
      if (!allowed.some((m) => sameModel(m, ref))) allowed.push(ref);
    }
  }
  return { default: fallback, allowed, source: 'catalogue' };
}

/** The model a request asked for (`provider:model`), when allowed; the default when none was asked. */
export async function chooseExtensionModel(ports: ExtensionModelPorts, caller: LlmCaller, requested: string | undefined | null, field = 'body.model'): Promise<ModelRef> {
  const models = await extensionModels(ports, caller);
  if (!requested) return models.default;
  const ref = parseModelRef(requested);
  if (!ref) throw new DomainError('INVALID_MODEL', 'model must be "provider:model" (e.g. "openai:gpt-4o-mini")', 'invalid', { field });
  if (!models.allowed.some((m) => sameModel(m, ref))) {
    throw new DomainError('MODEL_NOT_ALLOWED', `${requested} is not allowed for the extension (GET /extension/models)`, 'invalid', { field, allowed: models.allowed.map((m) => `${m.provider}:${m.model}`) });
  }
  return ref;
}

/**
 * Context window of a model in tokens (public figures of the families; conservative when unknown).
 * The PDF text given to a model is cut to fit it.
 */
export function contextTokensOf(ref: ModelRef): number {
  const m = ref.model.toLowerCase();
  if (ref.provider === 'offline') return 32_000;
  if (ref.provider === 'google' || m.startsWith('gemini')) return 1_000_000;
  if (ref.provider === 'anthropic' || m.startsWith('claude')) return 200_000;
  if (/^gpt-4\.1|^o[134]/.test(m)) return 200_000;
  if (/^gpt-4o|^gpt-4-turbo|^gpt-5/.test(m)) return 128_000;
  return 16_000;
}

/** Characters of document text that fit beside the prompt and the answer (3 characters a token, conservatively). */
export function contextCharsFor(ref: ModelRef, promptChars: number, answerTokens = 4096): number {
  return Math.max(0, (contextTokensOf(ref) - answerTokens - 512) * 3 - promptChars);
}
