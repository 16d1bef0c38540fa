import { z } from 'zod';
import type { LlmFinishReason, LlmProvider, LlmRequest, LlmResult, LlmUsage } from '../ports/llm.js';
import { LlmProviderError, badResponse } from './errors.js';
import { getJson, readSse, send, sseJson, trimSlash, withProviderCall, type AdapterSettings, type ProviderCall } from './http.js';
import { llmResult } from './result.js';

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
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  stop_reason: z.string().nullish(),
  usage: usageSchema,
});

const eventSchema = z.object({
  type: z.string(),
  message: z.object({ model: z.string().optional(), usage: usageSchema.optional() }).optional(),
  delta: z.object({ type: z.string().optional(), text: z.string().optional(), stop_reason: z.string().nullish() }).optional(),
  usage: usageSchema.optional(),
  error: z.object({ type: z.string().optional(), message: z.string().optional() }).optional(),
});

const modelsSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

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

export function createAnthropicProvider(settings: AdapterSettings): LlmProvider {
  const id = 'anthropic' as const;
  const trimmed = trimSlash(settings.baseUrl);
  const base = trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION, ...(settings.apiKey && { 'x-api-key': settings.apiKey }) };

  const body = (request: LlmRequest) => {
    const system = request.messages.filter((m) => m.role === 'system').map((m) => m.content);
    return {
      model: request.model,
      max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      ...(system.length > 0 && { system: system.join('\n\n') }),
      messages: request.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content })),
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      ...(request.stream && { stream: true }),
    };
  };

  const result = (request: LlmRequest, text: string, raw: RawUsage, model: string | undefined, stop: string | null | undefined, answer?: unknown): LlmResult =>
    llmResult(settings.prices, id, request, { text, usage: usageOf(raw), model, finishReason: finishReasonOf(stop), raw: answer });

  async function once(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const json = await getJson(call, { url: `${base}/messages`, headers, body: body(request) });
    const parsed = messageSchema.safeParse(json);
    if (!parsed.success) throw badResponse(id, `not a message (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`);
    const text = parsed.data.content.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('');
    return result(request, text, parsed.data.usage, parsed.data.model, parsed.data.stop_reason, json);
  }

  async function streamed(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const response = await send(call, { url: `${base}/messages`, headers: { ...headers, accept: 'text/event-stream' }, body: body(request) });
    let text = '';
    let model: string | undefined;
    let stop: string | null | undefined;
    let usage: RawUsage = {};
    let done = false;
    for await (const sse of readSse(response)) {
      const parsed = eventSchema.safeParse(sseJson(id, sse.data));
      if (!parsed.success) throw badResponse(id, `a stream event is not a Messages event`);
      const event = parsed.data;
      switch (event.type) {
        case 'message_start':
          model = event.message?.model;
          usage = { ...usage, ...event.message?.usage };
          break;
        case 'content_block_delta':
          if (event.delta?.type === 'text_delta' && event.delta.text) {
            text += event.delta.text;
            request.onDelta?.(event.delta.text);
          }
          break;
        case 'message_delta':
          // Counters here are cumulative: they replace the ones from message_start.
          stop = event.delta?.stop_reason ?? stop;
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
    return result(request, text, usage, model, stop);
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
  };
}
