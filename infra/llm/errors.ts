import { LlmProviderError } from '../../ports/llm-errors.js';

/** The adapters' shorthands for the port's errors (ports/llm-errors.ts). */
export { LlmAbortError, LlmProviderError, isLlmAbort, isLlmProviderError, type LlmErrorCode } from '../../ports/llm-errors.js';

export const notConfigured = (provider: string, message: string) => new LlmProviderError({ provider, code: 'PROVIDER_NOT_CONFIGURED', message });
export const badResponse = (provider: string, message: string, status?: number) =>
  new LlmProviderError({ provider, code: 'PROVIDER_BAD_RESPONSE', message: `${provider} answered something unusable: ${message}`, status });
