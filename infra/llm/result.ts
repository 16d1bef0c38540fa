import type { LlmFinishReason, LlmProviderId, LlmRequest, LlmResult, LlmUsage } from '../ports/llm.js';
import { charge, type PriceTable } from './prices.js';

/** What every adapter answers once it has the text, the usage and the model the provider named. */
export function llmResult(
  prices: PriceTable,
  provider: LlmProviderId,
  request: LlmRequest,
  answer: { text: string; usage: LlmUsage; model: string | undefined; finishReason: LlmFinishReason; raw?: unknown },
): LlmResult {
  const model = answer.model ?? request.model;
  return {
    text: answer.text,
    usage: answer.usage,
    // Priced by the model asked for, else by the one the provider answered with (often a dated variant).
    ...charge(prices, provider, answer.usage, request.model, model),
    model,
    provider,
    finishReason: answer.finishReason,
    ...(answer.raw !== undefined && { raw: answer.raw }),
  };
}
