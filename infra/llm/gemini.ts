import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { LlmFinishReason, LlmMessage, LlmProvider, LlmRequest, LlmResult, LlmToolCall, LlmToolChoice, LlmUsage } from '../../ports/llm.js';
import { badResponse } from './errors.js';
import { getJson, readSse, send, sseJson, trimSlash, withProviderCall, type AdapterSettings, type ProviderCall } from './http.js';
import { geminiOwnParts, geminiRefusal, toolResultParts } from './gemini-content.js';
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
        content: z
          .object({
            parts: z
              .array(
                z.object({
                  text: z.string().optional(),
                  thought: z.boolean().optional(),
                  functionCall: z.object({ id: z.string().nullish(), name: z.string(), args: z.record(z.string(), z.unknown()).nullish() }).optional(),
                }),
              )
              .default([]),
          })
          .optional(),
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

/** The answer's visible text (thought summaries left out), its function calls, and why it ended; a blocked prompt has no candidate. */
function textOf(answer: Answer): { text: string; finish: string | null | undefined; calls: Array<{ id: string; name: string; input: Record<string, unknown> }> } {
  const candidate = answer.candidates?.[0];
  if (!candidate) return { text: '', finish: answer.promptFeedback?.blockReason ? 'SAFETY' : undefined, calls: [] };
  const parts = candidate.content?.parts ?? [];
  const text = parts.filter((p) => !p.thought).map((p) => p.text ?? '').join('');
  // Gemini names calls only sometimes; the id it gives none of is ours, for the caller to answer with.
  const calls = parts.flatMap((p) => (p.functionCall ? [{ id: p.functionCall.id ?? `toolu_${randomUUID().replace(/-/g, '')}`, name: p.functionCall.name, input: p.functionCall.args ?? {} }] : []));
  return { text, finish: candidate.finishReason, calls };
}

/** Port messages as Gemini contents: calls as `functionCall` parts of the model's turn, results as `functionResponse` parts. */
const GENERATED_ID = /^toolu_/;
/** Ids we made up for Gemini's anonymous calls are not sent back: Gemini never heard of them. */
const idOf = (id: string) => (GENERATED_ID.test(id) ? {} : { id });

export function geminiContents(messages: LlmMessage[]): unknown[] {
  const names = new Map(messages.flatMap((m) => (m.toolCalls ?? []).map((c) => [c.id, c.name] as const)));
  return messages
    .filter((m) => m.role !== 'system')
    .map((m) => {
      const parts: unknown[] = [];
      for (const r of m.toolResults ?? []) {
        const name = r.name ?? names.get(r.toolCallId) ?? r.toolCallId;
        parts.push({ functionResponse: { ...idOf(r.toolCallId), name, response: r.isError ? { error: r.content } : { content: r.content } } });
      }
      parts.push(...toolResultParts(m));
      const own = geminiOwnParts(m);
      if (own) parts.push(...own);
      else if (m.content !== '' || (!m.toolResults?.length && !m.toolCalls?.length)) parts.push({ text: m.content });
      for (const c of m.toolCalls ?? []) parts.push({ functionCall: { ...idOf(c.id), name: c.name, args: c.input } });
      return { role: m.role === 'assistant' ? 'model' : 'user', parts };
    });
}

function geminiToolConfig(choice: LlmToolChoice): unknown {
  switch (choice.type) {
    case 'auto':
      return { functionCallingConfig: { mode: 'AUTO' } };
    case 'any':
      return { functionCallingConfig: { mode: 'ANY' } };
    case 'none':
      return { functionCallingConfig: { mode: 'NONE' } };
    case 'tool':
      return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
  }
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
      ...(request.stopSequences && request.stopSequences.length > 0 && { stopSequences: request.stopSequences }),
    };
    const tools = request.tools ?? [];
    return {
      contents: geminiContents(request.messages),
      ...(system.length > 0 && { systemInstruction: { parts: system } }),
      // parametersJsonSchema takes JSON Schema as clients write it (parameters takes only an OpenAPI subset).
      ...(tools.length > 0 && {
        tools: [{ functionDeclarations: tools.map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), parametersJsonSchema: t.inputSchema })) }],
      }),
      ...(tools.length > 0 && request.toolChoice && { toolConfig: geminiToolConfig(request.toolChoice) }),
      ...(Object.keys(config).length > 0 && { generationConfig: config }),
    };
  };

  const result = (request: LlmRequest, text: string, raw: RawUsage | undefined, model: string | undefined, finish: string | null | undefined, answer?: unknown, toolCalls?: LlmToolCall[]): LlmResult =>
    llmResult(settings.prices, id, request, { text, usage: usageOf(raw), model, finishReason: finishReasonOf(finish), raw: answer, toolCalls });

  async function once(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const json = await getJson(call, { url: modelUrl(request.model, 'generateContent'), headers, body: body(request) });
    const parsed = answerSchema.safeParse(json);
    if (!parsed.success) throw badResponse(id, `not a GenerateContentResponse (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`);
    if (!parsed.data.candidates && !parsed.data.promptFeedback) throw badResponse(id, 'no candidates and no promptFeedback');
    const { text, finish, calls } = textOf(parsed.data);
    return result(request, text, parsed.data.usageMetadata, parsed.data.modelVersion, finish, json, calls);
  }

  async function streamed(call: ProviderCall, request: LlmRequest): Promise<LlmResult> {
    const response = await send(call, { url: `${modelUrl(request.model, 'streamGenerateContent')}?alt=sse`, headers: { ...headers, accept: 'text/event-stream' }, body: body(request) });
    let text = '';
    let model: string | undefined;
    let finish: string | null | undefined;
    let usage: RawUsage | undefined;
    const calls: LlmToolCall[] = [];
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
      // Gemini streams a function call whole, in one part.
      for (const call of piece.calls) {
        request.onToolCallDelta?.({ index: calls.length, id: call.id, name: call.name, argumentsJson: JSON.stringify(call.input) });
        calls.push(call);
      }
      finish = piece.finish ?? finish;
    }
    // Gemini's stream has no end marker: a finish reason is how we know it was not cut short.
    if (!finish) throw badResponse(id, 'the stream ended without a finishReason');
    return result(request, text, usage, model, finish, undefined, calls);
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
    unsupported: geminiRefusal,
  };
}
