import { z } from 'zod';
import type { LlmFinishReason, LlmMessage, LlmProvider, LlmRequest, LlmResult, LlmThinkingPart, LlmToolCall, LlmUsage } from '../../ports/llm.js';
import { LlmProviderError, badResponse } from './errors.js';
import { getJson, readSse, send, sseJson, trimSlash, withProviderCall, type AdapterSettings, type ProviderCall } from './http.js';
import { anthropicBlock, anthropicToolResult, thinkingOf } from './anthropic-content.js';
import { llmResult, parseToolArguments } from './result.js';

/**
 * Anthropic Messages: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`.
 * The base URL may be given with or without `/v1` (ANTHROPIC_BASE_URL defaults to the host).
 */
export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; this is what a request without one asks for. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

// Cache counters are separate from input_tokens (unlike OpenAI's cached_tokens).
const usageSchema = z.object({
  input_tokens: z.number().int().nonnegative().nullish(),
  output_tokens: z.number().int().nonnegative().nullish(),
  cache_creation_input_tokens: z.number().int().nonnegative().nullish(),
  cache_read_input_tokens: z.number().int().nonnegative().nullish(),
});
type RawUsage = z.infer<typeof usageSchema>;

const messageSchema = z.object({
  model: z.string().optional(),
  content: z.array(
    z.object({
      type: z.string(),
      text: z.string().optional(),
      id: z.string().optional(),
      name: z.string().optional(),
      input: z.record(z.string(), z.unknown()).optional(),
      thinking: z.string().optional(),
      signature: z.string().optional(),
      data: z.string().optional(),
    }),
  ),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: usageSchema,
});

const eventSchema = z.object({
  type: z.string(),
  message: z.object({ model: z.string().optional(), usage: usageSchema.optional() }).optional(),
  index: z.number().int().nonnegative().optional(),
  content_block: z.object({ type: z.string(), id: z.string().optional(), name: z.string().optional(), thinking: z.string().optional(), signature: z.string().optional(), data: z.string().optional() }).optional(),
  delta: z
    .object({
      type: z.string().optional(),
      text: z.string().optional(),
      partial_json: z.string().optional(),
      thinking: z.string().optional(),
      signature: z.string().optional(),
      stop_reason: z.string().nullish(),
      stop_sequence: z.string().nullish(),
    })
    .optional(),
  usage: usageSchema.optional(),
  error: z.object({ type: z.string().optional(), message: z.string().optional() }).optional(),
});

const modelsSchema = z.object({ data: z.array(z.object({ id: z.string() })) });
const countSchema = z.object({ input_tokens: z.number().int().nonnegative() });

export function finishReasonOf(reason: string | null | undefined): LlmFinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'other';
  }
}

/** Normalised: promptTokens counts every input token, so the cache counters become subsets of it. */
function usageOf(raw: RawUsage): LlmUsage {
  const cachedTokens = raw.cache_read_input_tokens ?? 0;
  const cacheWriteTokens = raw.cache_creation_input_tokens ?? 0;
  const promptTokens = (raw.input_tokens ?? 0) + cachedTokens + cacheWriteTokens;
  const completionTokens = raw.output_tokens ?? 0;
  return { promptTokens, completionTokens, cachedTokens, cacheWriteTokens, totalTokens: promptTokens + completionTokens };
}

/**
 * Port messages as Messages content: tool calls become `tool_use` blocks (after the message's
 * parts: thinking, text), results `tool_result` blocks first in the user turn.
 */
export function anthropicMessages(messages: LlmMessage[]): unknown[] {
  return messages
    .filter((m) => m.role !== 'system')
    .map((m) => {
      const own = m.parts ? m.parts.map(anthropicBlock) : m.content === '' ? [] : [{ type: 'text', text: m.content }];
      if (m.role === 'assistant' && m.toolCalls?.length) {
        const blocks = m.toolCalls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input }));
        return { role: m.role, content: [...own, ...blocks] };
      }
      if (m.role === 'user' && m.toolResults?.length) return { role: m.role, content: [...m.toolResults.map(anthropicToolResult), ...own] };
      return { role: m.role, content: m.parts ? own : m.content };
    });
}

export function createAnthropicProvider(settings: AdapterSettings): LlmProvider {
  const id = 'anthropic' as const;
  const trimmed = trimSlash(settings.baseUrl);
  const base = trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION, ...(settings.apiKey && { 'x-api-key': settings.apiKey }) };

  // The input side of a request, shared by /messages and /messages/count_tokens.
  const input = (request: LlmRequest) => {
    const system = request.messages.filter((m) => m.role === 'system').map((m) => m.content);
    return {
      model: request.model,
      ...(system.length > 0 && { system: system.join('\n\n') }),
      messages: anthropicMessages(request.messages),
      ...(request.tools && request.tools.length > 0 && {
        tools: request.tools.map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), input_schema: t.inputSchema })),
      }),
      ...(request.toolChoice && request.tools && request.tools.length > 0 && { tool_choice: request.toolChoice }),
      ...(request.thinking && { thinking: request.thinking.type === 'enabled' ? { type: 'enabled', budget_tokens: request.thinking.budgetTokens } : { type: 'disabled' } }),
    };
  };

  const body = (request: LlmRequest) => {
    return {
      ...input(request),
      max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      ...(request.stopSequences && request.stopSequences.length > 0 && { stop_sequences: request.stopSequences }),
      ...(request.stream && { stream: true }),
    };
  };

  const result = (
    request: LlmRequest,
    text: string,
    raw: RawUsage,
    model: string | undefined,
    stop: string | null | undefined,
    answer?: unknown,
    extra: { toolCalls?: LlmToolCall[]; stopSequence?: string | null; thinking?: LlmThinkingPart[] } = {},
  ): LlmResult => llmResult(settings.prices, id, request, { text, usage: usageOf(raw), model, finishReason: finishReasonOf(stop), raw: answer, ...extra });

  async function once(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const json = await getJson(call, { url: `${base}/messages`, headers, body: body(request) });
    const parsed = messageSchema.safeParse(json);
    if (!parsed.success) throw badResponse(id, `not a message (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`);
    const text = parsed.data.content.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('');
    const toolCalls = parsed.data.content
      .filter((block) => block.type === 'tool_use')
      .map((block) => {
        if (!block.id || !block.name) throw badResponse(id, 'a tool_use block without id or name');
        return { id: block.id, name: block.name, input: block.input ?? {} };
      });
    const thinking = thinkingOf(parsed.data.content);
    return result(request, text, parsed.data.usage, parsed.data.model, parsed.data.stop_reason, json, { toolCalls, stopSequence: parsed.data.stop_sequence, ...(thinking.length > 0 && { thinking }) });
  }

  async function streamed(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const response = await send(call, { url: `${base}/messages`, headers: { ...headers, accept: 'text/event-stream' }, body: body(request) });
    let text = '';
    let model: string | undefined;
    let stop: string | null | undefined;
    let usage: RawUsage = {};
    let done = false;
    let stopSequence: string | null | undefined;
    // tool_use blocks by their content index; ours count from 0 in the order they started.
    const calls = new Map<number, { index: number; id: string; name: string; args: string }>();
    // thinking blocks likewise, by content index, kept whole for the result.
    const thoughts = new Map<number, { index: number; part: LlmThinkingPart }>();
    for await (const sse of readSse(response)) {
      const parsed = eventSchema.safeParse(sseJson(id, sse.data));
      if (!parsed.success) throw badResponse(id, `a stream event is not a Messages event`);
      const event = parsed.data;
      switch (event.type) {
        case 'message_start':
          model = event.message?.model;
          usage = { ...usage, ...event.message?.usage };
          break;
        case 'content_block_start':
          if (event.content_block?.type === 'tool_use') {
            if (!event.content_block.id || !event.content_block.name) throw badResponse(id, 'a tool_use block without id or name');
            const call = { index: calls.size, id: event.content_block.id, name: event.content_block.name, args: '' };
            calls.set(event.index ?? calls.size, call);
            request.onToolCallDelta?.({ index: call.index, id: call.id, name: call.name, argumentsJson: '' });
          } else if (event.content_block?.type === 'thinking' || event.content_block?.type === 'redacted_thinking') {
            const block = event.content_block;
            const part: LlmThinkingPart = block.type === 'thinking' ? { type: 'thinking', thinking: block.thinking ?? '', signature: block.signature ?? '' } : { type: 'redacted_thinking', data: block.data ?? '' };
            const thought = { index: thoughts.size, part };
            thoughts.set(event.index ?? thoughts.size, thought);
            request.onThinkingDelta?.(part.type === 'thinking' ? { index: thought.index, type: 'thinking', ...(part.thinking && { thinking: part.thinking }) } : { index: thought.index, type: 'redacted_thinking', data: part.data });
          }
          break;
        case 'content_block_delta':
          if (event.delta?.type === 'text_delta' && event.delta.text) {
            text += event.delta.text;
            request.onDelta?.(event.delta.text);
          } else if (event.delta?.type === 'input_json_delta') {
            const call = calls.get(event.index ?? -1);
            if (!call) throw badResponse(id, 'input_json_delta for a block that is not a tool_use');
            const piece = event.delta.partial_json ?? '';
            call.args += piece;
            if (piece) request.onToolCallDelta?.({ index: call.index, argumentsJson: piece });
          } else if (event.delta?.type === 'thinking_delta' || event.delta?.type === 'signature_delta') {
            const thought = thoughts.get(event.index ?? -1);
            if (thought?.part.type !== 'thinking') throw badResponse(id, `${event.delta.type} for a block that is not thinking`);
            if (event.delta.thinking) thought.part.thinking += event.delta.thinking;
            if (event.delta.signature) thought.part.signature += event.delta.signature;
            request.onThinkingDelta?.({ index: thought.index, type: 'thinking', ...(event.delta.thinking && { thinking: event.delta.thinking }), ...(event.delta.signature && { signature: event.delta.signature }) });
          }
          break;
        case 'message_delta':
          // Counters here are cumulative: they replace the ones from message_start.
          stop = event.delta?.stop_reason ?? stop;
          stopSequence = event.delta?.stop_sequence ?? stopSequence;
          for (const [key, value] of Object.entries(event.usage ?? {})) if (value !== null && value !== undefined) usage = { ...usage, [key]: value };
          break;
        case 'message_stop':
          done = true;
          break;
        case 'error':
          throw new LlmProviderError({ provider: id, code: 'PROVIDER_ERROR', message: `anthropic failed mid-stream: ${event.error?.type ?? 'error'}: ${event.error?.message ?? 'no details'}` });
        default:
          // ping, content_block_start/stop, and event types added later
          break;
      }
      if (done) break;
    }
    if (!done) throw badResponse(id, 'the stream ended before message_stop');
    const toolCalls = [...calls.values()].map((c) => {
      // Malformed input stays a call (with the raw text) so that a tool loop can tell the model.
      const input = parseToolArguments(c.args);
      return input ? { id: c.id, name: c.name, input } : { id: c.id, name: c.name, input: {}, invalidArguments: c.args };
    });
    const thinking = [...thoughts.values()].map((t) => t.part);
    return result(request, text, usage, model, stop, undefined, { toolCalls, stopSequence, ...(thinking.length > 0 && { thinking }) });
  }

  return {
    id,
    complete: (request) => withProviderCall(id, settings.limits, request.signal, (call) => (request.stream ? streamed(call, request) : once(call, request))),
    listModels: (signal) =>
      withProviderCall(id, settings.limits, signal, async (call) => {
        const parsed = modelsSchema.safeParse(await getJson(call, { url: `${base}/models?limit=1000`, headers }, 0));
        if (!parsed.success) throw badResponse(id, 'the model list is not {data: [{id}]}');
        return parsed.data.data.map((m) => m.id).sort();
      }),
    // Anthropic takes every image and document source it defines: nothing to refuse.
    unsupported: () => null,
    countTokens: (request) =>
      withProviderCall(id, settings.limits, request.signal, async (call) => {
        const json = await getJson(call, { url: `${base}/messages/count_tokens`, headers, body: input(request) });
        const parsed = countSchema.safeParse(json);
        if (!parsed.success) throw badResponse(id, 'the count is not {input_tokens}');
        return parsed.data.input_tokens;
      }),
  };
}
