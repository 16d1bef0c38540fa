import { ATTR, inSpan, SpanKind, tracingEnabled, type Attributes } from '../../lib/tracing.js';
import { isLlmAbort } from '../../ports/llm-errors.js';
import type { LlmCaller, LlmGateway, LlmProvider, LlmProviderId, LlmRequest, LlmResult } from '../../ports/llm.js';

/**
 * The LLM gateway with a CLIENT span around every provider call, named and described by the
 * OpenTelemetry GenAI semantic conventions (`chat gpt-4o`; `gen_ai.operation.name`,
 * `gen_ai.provider.name`, request and response model, token usage, finish reasons). The prompt and
 * the completion are attributes only when the caller's organization opted in (PUT
 * /orgs/{orgId}/telemetry-settings); credentials never are. Wrapped in the composition root like
 * the metrics (infra/metrics/llm.ts), so the adapters know nothing of tracing.
 */

/** Whether a caller's prompts and completions may be recorded on spans. */
export type ContentPolicy = (caller: LlmCaller) => Promise<boolean>;

/** The `gen_ai.provider.name` values of the conventions for our provider ids. */
const PROVIDER_NAMES: Record<LlmProviderId, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  google: 'gcp.gemini',
  openai_compatible: 'openai',
  offline: 'offline',
};

export function traceLlmGateway(gateway: LlmGateway, recordContent: ContentPolicy): LlmGateway {
  return new Proxy(gateway, {
    get(target, key, receiver) {
      if (key !== 'providerFor') return Reflect.get(target, key, receiver);
      return async (...args: Parameters<LlmGateway['providerFor']>) => traceProvider(await target.providerFor(...args), args[0], recordContent);
    },
  });
}

function traceProvider(provider: LlmProvider, caller: LlmCaller, recordContent: ContentPolicy): LlmProvider {
  return new Proxy(provider, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key !== 'complete' || typeof value !== 'function') return value;
      return async (request: LlmRequest) => {
        const complete = () => (value as LlmProvider['complete']).call(target, request);
        if (!tracingEnabled()) return complete();
        const content = await recordContent(caller).catch(() => false);
        return inSpan(`chat ${request.model}`, { kind: SpanKind.CLIENT, attributes: requestAttributes(target.id, caller, request, content) }, async (span) => {
          try {
            const result = await complete();
            span?.setAttributes(resultAttributes(result, content));
            return result;
          } catch (err) {
            span?.setAttribute('error.type', isLlmAbort(err) ? 'aborted' : String((err as { code?: unknown }).code ?? (err as Error).name ?? 'error'));
            throw err;
          }
        });
      };
    },
  });
}

export function requestAttributes(provider: LlmProviderId, caller: LlmCaller, request: LlmRequest, content: boolean): Attributes {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': PROVIDER_NAMES[provider],
    // The name before the conventions renamed it, still what several backends (Langfuse among them) read.
    'gen_ai.system': PROVIDER_NAMES[provider],
    'gen_ai.request.model': request.model,
  };
  if (request.temperature !== undefined) attributes['gen_ai.request.temperature'] = request.temperature;
  if (request.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = request.maxTokens;
  if (request.stopSequences?.length) attributes['gen_ai.request.stop_sequences'] = request.stopSequences;
  if (request.tools?.length) attributes['gen_ai.request.tool_names'] = request.tools.map((t) => t.name);
  if (caller.orgId) attributes[ATTR.orgId] = caller.orgId;
  if (content) {
    const system = request.messages.filter((m) => m.role === 'system').map((m) => ({ type: 'text', content: m.content }));
    if (system.length > 0) attributes['gen_ai.system_instructions'] = JSON.stringify(system);
    attributes['gen_ai.input.messages'] = JSON.stringify(
      request.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, parts: [{ type: 'text', content: m.content }] })),
    );
  }
  return attributes;
}

export function resultAttributes(result: LlmResult, content: boolean): Attributes {
  const attributes: Attributes = {
    'gen_ai.response.model': result.model,
    'gen_ai.response.finish_reasons': [result.finishReason],
    'gen_ai.usage.input_tokens': result.usage.promptTokens,
    'gen_ai.usage.output_tokens': result.usage.completionTokens,
  };
  if (result.usage.cachedTokens > 0) attributes['gen_ai.usage.cache_read.input_tokens'] = result.usage.cachedTokens;
  if (result.cost > 0) attributes['flows.llm.cost_usd'] = result.cost;
  if (content) {
    const parts: Array<Record<string, unknown>> = [{ type: 'text', content: result.text }];
    for (const call of result.toolCalls ?? []) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.input });
    attributes['gen_ai.output.messages'] = JSON.stringify([{ role: 'assistant', parts, finish_reason: result.finishReason }]);
  }
  return attributes;
}
