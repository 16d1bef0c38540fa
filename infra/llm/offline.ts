import type { LlmProvider, LlmRequest, LlmResult, LlmTool, LlmToolCall } from '../ports/llm.js';
import { LlmAbortError } from './errors.js';

/**
 * The offline provider (`llm: "offline"`, any model name): deterministic and without network,
 * for tests, demos and dry runs. Its output is the rendered prompt — the last user message —
 * unchanged; tokens are whitespace-separated words (prompt + output); it costs nothing.
 * Its results say `provider: "offline"`, so no one mistakes them for a model's answer.
 *
 * With tools: when the last user message carries no tool results and tools are offered, it calls
 * one (`toolChoice` `tool` names it, `any` takes the first, `auto` the first whose name appears in
 * the prompt; `none` or no match: plain text), with every string property of the tool's schema
 * set to the prompt. Its call ids are `toolu_offline_<messages>_<n>`. When the last user message
 * carries tool results, its output is their contents (one per line) followed by the message's
 * text. `stopSequences` cut the output before the first one found (`stopSequence` names it).
 */
export const countWords = (text: string) => {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
};

export const OFFLINE_MODEL_HINT = 'any model name';

function chosenTool(request: LlmRequest, prompt: string): LlmTool | null {
  const tools = request.tools ?? [];
  if (tools.length === 0) return null;
  const choice = request.toolChoice ?? { type: 'auto' };
  switch (choice.type) {
    case 'none':
      return null;
    case 'any':
      return tools[0];
    case 'tool':
      return tools.find((t) => t.name === choice.name) ?? null;
    case 'auto':
      return tools.find((t) => prompt.includes(t.name)) ?? null;
  }
}

function offlineInput(tool: LlmTool, prompt: string): Record<string, unknown> {
  const properties = (tool.inputSchema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.fromEntries(Object.entries(properties).filter(([, schema]) => schema?.type === 'string').map(([name]) => [name, prompt]));
}

export function offlineCompletion(request: LlmRequest): LlmResult {
  const last = [...request.messages].reverse().find((m) => m.role === 'user');
  const results = last?.toolResults ?? [];
  const promptText = last?.content ?? '';
  const prompt = results.length > 0 ? [...results.map((r) => r.content), ...(promptText ? [promptText] : [])].join('\n') : promptText;
  const tool = results.length > 0 ? null : chosenTool(request, prompt);
  const toolCalls: LlmToolCall[] = tool ? [{ id: `toolu_offline_${request.messages.length}_0`, name: tool.name, input: offlineInput(tool, prompt) }] : [];
  let text = tool ? '' : prompt;
  let stopSequence: string | undefined;
  for (const sequence of request.stopSequences ?? []) {
    const at = sequence === '' ? -1 : text.indexOf(sequence);
    if (at !== -1 && (stopSequence === undefined || at < text.indexOf(stopSequence))) stopSequence = sequence;
  }
  if (stopSequence !== undefined) text = text.slice(0, text.indexOf(stopSequence));
  const promptTokens = countWords(prompt);
  const completionTokens = countWords(text) + toolCalls.reduce((n, c) => n + countWords(JSON.stringify(c.input)), 0);
  return {
    text,
    usage: { promptTokens, completionTokens, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: promptTokens + completionTokens },
    cost: 0,
    priced: true,
    model: request.model,
    provider: 'offline',
    finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
    ...(toolCalls.length > 0 && { toolCalls }),
    ...(stopSequence !== undefined && { stopSequence }),
  };
}

export function createOfflineProvider(): LlmProvider {
  return {
    id: 'offline',
    async complete(request) {
      if (request.signal?.aborted) throw new LlmAbortError('offline', request.signal.reason);
      const result = offlineCompletion(request);
      // One delta with the whole text (and one per tool call): deterministic, and enough for callers that render streams.
      if (request.stream && result.text) request.onDelta?.(result.text);
      if (request.stream) for (const [index, call] of (result.toolCalls ?? []).entries()) request.onToolCallDelta?.({ index, id: call.id, name: call.name, argumentsJson: JSON.stringify(call.input) });
      return result;
    },
    async listModels() {
      return ['offline'];
    },
  };
}
