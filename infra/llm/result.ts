import type { LlmFinishReason, LlmProviderId, LlmRequest, LlmResult, LlmThinkingPart, LlmToolCall, LlmUsage } from '../../ports/llm.js';
import { charge, type PriceTable } from './prices.js';

/** What every adapter answers once it has the text, the usage and the model the provider named. */
export function llmResult(
  prices: PriceTable,
  provider: LlmProviderId,
  request: LlmRequest,
  answer: { text: string; usage: LlmUsage; model: string | undefined; finishReason: LlmFinishReason; raw?: unknown; toolCalls?: LlmToolCall[]; stopSequence?: string | null; thinking?: LlmThinkingPart[] },
): LlmResult {
  const model = answer.model ?? request.model;
  return {
    text: answer.text,
    usage: answer.usage,
    // Priced by the model asked for, else by the one the provider answered with (often a dated variant).
    ...charge(prices, provider, answer.usage, request.model, model),
    model,
    provider,
    // A provider that called tools but says only "stop" (Gemini) still ended its turn for them.
    finishReason: answer.toolCalls?.length && answer.finishReason === 'stop' ? 'tool_calls' : answer.finishReason,
    ...(answer.toolCalls?.length && { toolCalls: answer.toolCalls }),
    ...(answer.stopSequence && { stopSequence: answer.stopSequence }),
    ...(answer.thinking?.length && { thinking: answer.thinking }),
    ...(answer.raw !== undefined && { raw: answer.raw }),
  };
}

/** A tool call's arguments as the port gives them: a JSON object (`{}` for an empty text). */
export function parseToolArguments(text: string): Record<string, unknown> | null {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
