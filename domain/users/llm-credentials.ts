import { z } from 'zod';
import { DomainError } from '../shared/decider.js';
import type { UserEvent } from './events.js';
import type { UserState } from './state.js';

/**
 * A user's own LLM provider keys, used in the personal workspace. The key reaches the decider
 * already sealed (SealedBox `v1.…`): the plaintext never enters a command, an event or the log.
 */
export const USER_LLM_PROVIDERS = ['openai', 'anthropic', 'google', 'openai_compatible'] as const;
export type UserLlmProvider = (typeof USER_LLM_PROVIDERS)[number];
export const userLlmProviderSchema = z.enum(USER_LLM_PROVIDERS);
export const LLM_BASE_URL_MAX_LENGTH = 2048;
export const llmBaseUrlSchema = z.url({ protocol: /^https?$/ }).max(LLM_BASE_URL_MAX_LENGTH);

export type UserLlmCredentialCommand =
  | { type: 'SetUserLlmCredential'; provider: UserLlmProvider; sealedApiKey: string; baseUrl: string | null; at: string }
  | { type: 'RemoveUserLlmCredential'; provider: UserLlmProvider; at: string };

const invalid = (field: string, message: string) =>
  new DomainError('VALIDATION_FAILED', `${field}: ${message}`, 'invalid', { fields: [{ field, message }] });

function checkProvider(provider: string): void {
  if (!userLlmProviderSchema.safeParse(provider).success) throw invalid('body.provider', `must be one of ${USER_LLM_PROVIDERS.join(', ')}`);
}

export function decideUserLlmCredential(command: UserLlmCredentialCommand, state: UserState): UserEvent[] {
  checkProvider(command.provider);
  if (command.type === 'RemoveUserLlmCredential') {
    // Removing what is not there changes nothing: a repeated DELETE-like PUT stays harmless.
    if (!state.llmProviders.includes(command.provider)) return [];
    return [{ type: 'UserLlmCredentialRemoved', data: { provider: command.provider, at: command.at } }];
  }
  // Guards the "only sealed values in events" rule against a caller that forgot to seal.
  if (!command.sealedApiKey.startsWith('v1.')) throw new DomainError('KEY_NOT_SEALED', 'the API key must be sealed before it is recorded', 'internal');
  if (command.baseUrl !== null && !llmBaseUrlSchema.safeParse(command.baseUrl).success) throw invalid('body.baseUrl', 'must be an http(s) URL');
  // An OpenAI-compatible server (vLLM, llama.cpp, Ollama) has no default address.
  if (command.provider === 'openai_compatible' && command.baseUrl === null) throw invalid('body.baseUrl', 'required for openai_compatible');
  const { provider, sealedApiKey, baseUrl, at } = command;
  return [{ type: 'UserLlmCredentialSet', data: { provider, sealedApiKey, baseUrl, at } }];
}
