import { z } from 'zod';
import type { LlmFinishReason, LlmMessage, LlmProvider, LlmRequest, LlmResult, LlmToolCall, LlmToolChoice, LlmUsage } from '../../ports/llm.js';
import { badResponse } from './errors.js';
import { getJson, readSse, send, sseJson, trimSlash, withProviderCall, type AdapterSettings, type ProviderCall } from './http.js';
import { openAiContent, openAiRefusal, toolResultMedia } from './openai-content.js';
import { llmResult, parseToolArguments } from './result.js';

/**
 * OpenAI Chat Completions, and every server that speaks it (vLLM, llama.cpp server, Ollama's
 * /v1, LM Studio): `POST {baseUrl}/chat/completions`, `GET {baseUrl}/models`. The base URL
 * includes the version segment (`https://api.openai.com/v1`, `http://localhost:11434/v1`).
 */

const usageSchema = z.object({
  prompt_tokens: z.number().int().nonnegative().default(0),
  completion_tokens: z.number().int().nonnegative().default(0),
  total_tokens: z.number().int().nonnegative().optional(),
  // A subset of prompt_tokens, billed at the cached rate.
  prompt_tokens_details: z.object({ cached_tokens: z.number().int().nonnegative().nullish() }).nullish(),
});

const toolCallSchema = z.object({ id: z.string(), function: z.object({ name: z.string(), arguments: z.string().default('') }) });

const completionSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullish(), refusal: z.string().nullish(), tool_calls: z.array(toolCallSchema).nullish() }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  // Some compatible servers omit usage; the call then reports zero tokens rather than failing.
  usage: usageSchema.nullish(),
});

const chunkSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(z.object({ index: z.number().int().nonnegative(), id: z.string().nullish(), function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish() }))
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
  usage: usageSchema.nullish(),
  error: z.object({ message: z.string().optional() }).nullish(),
});

const modelsSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

export function finishReasonOf(reason: string | null | undefined): LlmFinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    default:
      return 'other';
  }
}

function usageOf(usage: z.infer<typeof usageSchema> | null | undefined): LlmUsage {
  const promptTokens = usage?.prompt_tokens ?? 0;
  const completionTokens = usage?.completion_tokens ?? 0;
  return {
    promptTokens,
    completionTokens,
    cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: 0,
    totalTokens: usage?.total_tokens ?? promptTokens + completionTokens,
  };
}

/** Port messages as Chat Completions messages: tool results become `tool` messages before the user's text. */
export function openAiMessages(messages: LlmMessage[]): unknown[] {
  return messages.flatMap((m): unknown[] => {
    if (m.role === 'assistant' && m.toolCalls?.length) {
      const calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } }));
      return [{ role: 'assistant', content: m.content === '' ? null : m.content, tool_calls: calls }];
    }
    if (m.role === 'user' && m.toolResults?.length) {
      const results = m.toolResults.map((r) => ({ role: 'tool', tool_call_id: r.toolCallId, content: r.isError ? `Error: ${r.content}` : r.content }));
      // `tool` messages take text only: the results' images and files follow in one user message, with the turn's own content.
      const media = toolResultMedia(m);
      const own = openAiContent(m);
      if (media.length === 0) return own === '' ? results : [...results, { role: 'user', content: own }];
      const ownParts = typeof own === 'string' ? (own === '' ? [] : [{ type: 'text', text: own }]) : (own as unknown[]);
      return [...results, { role: 'user', content: [...media, ...ownParts] }];
    }
    return [{ role: m.role, content: openAiContent(m) }];
  });
}

function openAiToolChoice(choice: LlmToolChoice): unknown {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}

function toolCallsOf(calls: Array<z.infer<typeof toolCallSchema>> | null | undefined): LlmToolCall[] {
  return (calls ?? []).map((c) => {
    // Malformed arguments stay a call (with the raw text) so that a tool loop can tell the model.
    const input = parseToolArguments(c.function.arguments);
    return input ? { id: c.id, name: c.function.name, input } : { id: c.id, name: c.function.name, input: {}, invalidArguments: c.function.arguments };
  });
}

export function createOpenAiCompatibleProvider(id: 'openai' | 'openai_compatible', settings: AdapterSettings): LlmProvider {
  const base = trimSlash(settings.baseUrl);
  const headers: Record<string, string> = settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {};

  const body = (request: LlmRequest) => ({
    model: request.model,
    messages: openAiMessages(request.messages),
    ...(request.temperature !== undefined && { temperature: request.temperature }),
    ...(request.tools && request.tools.length > 0 && {
      tools: request.tools.map((t) => ({ type: 'function', function: { name: t.name, ...(t.description !== undefined && { description: t.description }), parameters: t.inputSchema } })),
    }),
    ...(request.toolChoice && request.tools && request.tools.length > 0 && { tool_choice: openAiToolChoice(request.toolChoice) }),
    ...(request.stopSequences && request.stopSequences.length > 0 && { stop: request.stopSequences }),
    // OpenAI's reasoning models refuse max_tokens; self-hosted servers mostly know only max_tokens.
    ...(request.maxTokens !== undefined && (id === 'openai' ? { max_completion_tokens: request.maxTokens } : { max_tokens: request.maxTokens })),
    ...(request.stream && { stream: true, stream_options: { include_usage: true } }),
  });

  const result = (request: LlmRequest, text: string, usage: LlmUsage, model: string | undefined, finish: string | null | undefined, raw?: unknown, toolCalls?: LlmToolCall[]): LlmResult =>
    llmResult(settings.prices, id, request, { text, usage, model, finishReason: finishReasonOf(finish), raw, toolCalls });

  async function once(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const json = await getJson(call, { url: `${base}/chat/completions`, headers, body: body(request) });
    const parsed = completionSchema.safeParse(json);
    if (!parsed.success) throw badResponse(id, `not a chat completion (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`);
    const choice = parsed.data.choices[0];
    const toolCalls = toolCallsOf(choice.message.tool_calls);
    return result(request, choice.message.content ?? choice.message.refusal ?? '', usageOf(parsed.data.usage), parsed.data.model, choice.finish_reason, json, toolCalls);
  }

  async function streamed(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const response = await send(call, { url: `${base}/chat/completions`, headers: { ...headers, accept: 'text/event-stream' }, body: body(request) });
    let text = '';
    let model: string | undefined;
    let finish: string | null | undefined;
    let usage: LlmUsage | null = null;
    let done = false;
    // Tool calls by the provider's index; ours count from 0 in the order they started.
    const calls = new Map<number, { index: number; id: string; name: string; args: string }>();
    for await (const event of readSse(response)) {
      if (event.data === '[DONE]') {
        done = true;
        break;
      }
      const parsed = chunkSchema.safeParse(sseJson(id, event.data));
      if (!parsed.success) throw badResponse(id, 'a stream chunk is not a chat completion chunk');
      if (parsed.data.error) throw badResponse(id, `error in the stream: ${parsed.data.error.message ?? 'no details'}`);
      model ??= parsed.data.model;
      // The final chunk (choices: []) carries the usage when stream_options.include_usage is set.
      if (parsed.data.usage) usage = usageOf(parsed.data.usage);
      for (const choice of parsed.data.choices) {
        const delta = choice.delta?.content;
        if (delta) {
          text += delta;
          request.onDelta?.(delta);
        }
        for (const piece of choice.delta?.tool_calls ?? []) {
          let call = calls.get(piece.index);
          const args = piece.function?.arguments ?? '';
          if (!call) {
            call = { index: calls.size, id: piece.id ?? `call_${calls.size}`, name: piece.function?.name ?? '', args: '' };
            calls.set(piece.index, call);
            request.onToolCallDelta?.({ index: call.index, id: call.id, name: call.name, argumentsJson: args });
          } else if (args) request.onToolCallDelta?.({ index: call.index, argumentsJson: args });
          call.args += args;
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    }
    if (!done && !finish) throw badResponse(id, 'the stream ended before the answer did');
    const toolCalls = toolCallsOf([...calls.values()].map((c) => ({ id: c.id, function: { name: c.name, arguments: c.args } })));
    return result(request, text, usage ?? usageOf(null), model, finish, undefined, toolCalls);
  }

  return {
    id,
    complete: (request) => withProviderCall(id, settings.limits, request.signal, (call) => (request.stream ? streamed(call, request) : once(call, request))),
    listModels: (signal) =>
      withProviderCall(id, settings.limits, signal, async (call) => {
        const parsed = modelsSchema.safeParse(await getJson(call, { url: `${base}/models`, headers }, 0));
        if (!parsed.success) throw badResponse(id, 'the model list is not {data: [{id}]}');
        return parsed.data.data.map((m) => m.id).sort();
      }),
    unsupported: (request) => openAiRefusal(id, request),
  };
}
