import type { LlmProvider, LlmRequest, LlmResult } from '../ports/llm.js';
import { LlmAbortError } from './errors.js';

/**
 * The offline provider (`llm: "offline"`, any model name): deterministic and without network,
 * for tests, demos and dry runs. Its output is the rendered prompt — the last user message —
 * unchanged; tokens are whitespace-separated words (prompt + output); it costs nothing.
 * Its results say `provider: "offline"`, so no one mistakes them for a model's answer.
 */
export const countWords = (text: string) => {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
};

export const OFFLINE_MODEL_HINT = 'any model name';

export function offlineCompletion(request: LlmRequest): LlmResult {
  const prompt = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const text = prompt;
  const promptTokens = countWords(prompt);
  const completionTokens = countWords(text);
  return {
    text,
    usage: { promptTokens, completionTokens, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: promptTokens + completionTokens },
    cost: 0,
    priced: true,
    model: request.model,
    provider: 'offline',
    finishReason: 'stop',
  };
}

export function createOfflineProvider(): LlmProvider {
  return {
    id: 'offline',
    async complete(request) {
      if (request.signal?.aborted) throw new LlmAbortError('offline', request.signal.reason);
      const result = offlineCompletion(request);
      // One delta with the whole text: deterministic, and enough for callers that render streams.
      if (request.stream && result.text) request.onDelta?.(result.text);
      return result;
    },
    async listModels() {
      return ['offline'];
    },
  };
}
