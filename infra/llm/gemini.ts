import { z } from 'zod';
import type { LlmFinishReason, LlmProvider, LlmRequest, LlmResult, LlmUsage } from '../ports/llm.js';
import { badResponse } from './errors.js';
import { getJson, readSse, send, sseJson, trimSlash, withProviderCall, type AdapterSettings, type ProviderCall } from './http.js';
import { llmResult } from './result.js';

/**
 * Google Gemini (Generative Language API): `POST {base}/v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse`, `GET {base}/v1beta/models`. The key travels in the
 * `x-goog-api-key` header, not in the URL, so it never lands in access logs.
 */

const usageSchema = z.object({
  promptTokenCount: z.number().int().nonnegative().nullish(),
  candidatesTokenCount: z.number().int().nonnegative().nullish(),
  totalTokenCount: z.number().int().nonnegative().nullish(),
  // A subset of promptTokenCount.
  cachedContentTokenCount: z.number().int().nonnegative().nullish(),
  // Thinking models bill these as output.
  thoughtsTokenCount: z.number().int().nonnegative().nullish(),
});
type RawUsage = z.infer<typeof usageSchema>;

const answerSchema = z.object({
  candidates: z
    .array(
      z.object({
        content: z.object({ parts: z.array(z.object({ text: z.string().optional(), thought: z.boolean().optional() })).default([]) }).optional(),
        finishReason: z.string().nullish(),
      }),
    )
    .optional(),
  promptFeedback: z.object({ blockReason: z.string().optional() }).optional(),
  usageMetadata: usageSchema.optional(),
  modelVersion: z.string().optional(),
});
type Answer = z.infer<typeof answerSchema>;

const modelsSchema = z.object({
  models: z.array(z.object({ name: z.string(), supportedGenerationMethods: z.array(z.string()).optional() })).default([]),
});

export function finishReasonOf(reason: string | null | undefined): LlmFinishReason {
  switch (reason) {
    case 'STOP':
      return 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
      return 'content_filter';
    default:
      return 'other';
  }
}

function usageOf(raw: RawUsage | undefined): LlmUsage {
  const promptTokens = raw?.promptTokenCount ?? 0;
  const completionTokens = (raw?.candidatesTokenCount ?? 0) + (raw?.thoughtsTokenCount ?? 0);
  return {
    promptTokens,
    completionTokens,
    cachedTokens: raw?.cachedContentTokenCount ?? 0,
    cacheWriteTokens: 0,
    totalTokens: raw?.totalTokenCount ?? promptTokens + completionTokens,
  };
}

/** The answer's visible text (thought summaries left out) and why it ended; a blocked prompt has no candidate. */
function textOf(answer: Answer): { text: string; finish: string | null | undefined } {
  const candidate = answer.candidates?.[0];
  if (!candidate) return { text: '', finish: answer.promptFeedback?.blockReason ? 'SAFETY' : undefined };
  const text = (candidate.content?.parts ?? []).filter((p) => !p.thought).map((p) => p.text ?? '').join('');
  return { text, finish: candidate.finishReason };
}

export function createGeminiProvider(settings: AdapterSettings): LlmProvider {
  const id = 'google' as const;
  const trimmed = trimSlash(settings.baseUrl);
  const base = trimmed.endsWith('/v1beta') ? trimmed : `${trimmed}/v1beta`;
  const headers: Record<string, string> = settings.apiKey ? { 'x-goog-api-key': settings.apiKey } : {};
  const modelUrl = (model: string, method: string) => `${base}/models/${encodeURIComponent(model.replace(/^models\//, ''))}:${method}`;

  const body = (request: LlmRequest) => {
    const system = request.messages.filter((m) => m.role === 'system').map((m) => ({ text: m.content }));
    const config = {
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      ...(request.maxTokens !== undefined && { maxOutputTokens: request.maxTokens }),
    };
    return {
      contents: request.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] })),
      ...(system.length > 0 && { systemInstruction: { parts: system } }),
      ...(Object.keys(config).length > 0 && { generationConfig: config }),
    };
  };

  const result = (request: LlmRequest, text: string, raw: RawUsage | undefined, model: string | undefined, finish: string | null | undefined, answer?: unknown): LlmResult =>
    llmResult(settings.prices, id, request, { text, usage: usageOf(raw), model, finishReason: finishReasonOf(finish), raw: answer });

  async function once(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const json = await getJson(call, { url: modelUrl(request.model, 'generateContent'), headers, body: body(request) });
    const parsed = answerSchema.safeParse(json);
    if (!parsed.success) throw badResponse(id, `not a GenerateContentResponse (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`);
    if (!parsed.data.candidates && !parsed.data.promptFeedback) throw badResponse(id, 'no candidates and no promptFeedback');
    const { text, finish } = textOf(parsed.data);
    return result(request, text, parsed.data.usageMetadata, parsed.data.modelVersion, finish, json);
  }

  async function streamed(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const response = await send(call, { url: `${modelUrl(request.model, 'streamGenerateContent')}?alt=sse`, headers: { ...headers, accept: 'text/event-stream' }, body: body(request) });
    let text = '';
    let model: string | undefined;
    let finish: string | null | undefined;
    let usage: RawUsage | undefined;
    for await (const sse of readSse(response)) {
      const parsed = answerSchema.safeParse(sseJson(id, sse.data));
      if (!parsed.success) throw badResponse(id, 'a stream chunk is not a GenerateContentResponse');
      model ??= parsed.data.modelVersion;
      // usageMetadata is cumulative; the last chunk's is the whole call's.
      if (parsed.data.usageMetadata) usage = parsed.data.usageMetadata;
      const piece = textOf(parsed.data);
      if (piece.text) {
        text += piece.text;
        request.onDelta?.(piece.text);
      }
      finish = piece.finish ?? finish;
    }
    // Gemini's stream has no end marker: a finish reason is how we know it was not cut short.
    if (!finish) throw badResponse(id, 'the stream ended without a finishReason');
    return result(request, text, usage, model, finish);
  }

  return {
    id,
    complete: (request) => withProviderCall(id, settings.limits, request.signal, (call) => (request.stream ? streamed(call, request) : once(call, request))),
    listModels: (signal) =>
      withProviderCall(id, settings.limits, signal, async (call) => {
        const parsed = modelsSchema.safeParse(await getJson(call, { url: `${base}/models?pageSize=1000`, headers }, 0));
        if (!parsed.success) throw badResponse(id, 'the model list is not {models: [{name}]}');
        return parsed.data.models
          .filter((m) => !m.supportedGenerationMethods || m.supportedGenerationMethods.includes('generateContent'))
          .map((m) => m.name.replace(/^models\//, ''))
          .sort();
      }),
  };
}
