import { z } from 'zod';
import { processWithLlm } from '../../commands/llm.js';
import { DomainError } from '../../domain/shared/decider.js';
import { LLM_PROVIDER_IDS, LLM_PROVIDER_NAMES, LlmProviderError, isLlmAbort, type LlmMessage, type LlmProviderId } from '../../ports/llm.js';
import { errorBody } from '../errors.js';
import { defineRoute, type RouteInput } from '../route.js';

const tag = 'LLM';
const providerId = z.enum(LLM_PROVIDER_IDS);

const providerSchema = z.object({
  id: providerId,
  name: z.string(),
  configured: z.boolean().describe("for this caller: the organization's credential (organization workspace) or the user's own (personal workspace), else the service-wide key"),
  source: z.enum(['organization', 'user', 'environment', 'builtin']).nullable(),
  models: z.array(z.string()).describe('models of the price table'),
  anyModel: z.boolean().describe('accepts any model name (offline, OpenAI-compatible servers)'),
});

const providerModelsSchema = z.object({
  id: providerId,
  configured: z.boolean(),
  source: z.enum(['provider', 'price_table', 'builtin']).describe("provider: its own list endpoint answered; price_table: not configured, or the list call failed (see error)"),
  models: z.array(z.string()),
  anyModel: z.boolean(),
  error: z.string().optional(),
});

const processBody = z.strictObject({
  provider: providerId,
  model: z.string().trim().min(1).max(200),
  prompt: z.string().min(1).max(200_000),
  system: z.string().max(100_000).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(1).max(200_000).optional(),
});

const processReply = z.object({
  success: z.literal(true),
  output: z.string(),
  usage: z.object({
    total_tokens: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    cached_tokens: z.number(),
    cache_write_tokens: z.number(),
    cost: z.number().describe('US dollars, from the price table'),
  }),
  provider: providerId,
  model: z.string().describe('the model that answered, as the provider named it'),
  finishReason: z.enum(['stop', 'length', 'content_filter', 'tool_calls', 'other']),
  priced: z.boolean().describe('false when the model has no price table entry (cost 0)'),
  executionTime: z.number().describe('milliseconds'),
});

/** In the personal workspace (no orgId) the user's own credentials come before the service's. */
const callerOf = (principal: RouteInput<unknown, unknown, unknown>['principal']) => ({ orgId: principal?.orgId ?? null, userId: principal?.userId ?? null });

/** Aborts the provider call when the client goes away: nobody will read the answer. */
function abortOnDisconnect(koa: RouteInput<unknown, unknown, unknown>['koa']): AbortSignal {
  const controller = new AbortController();
  koa.res.once('close', () => {
    if (!koa.res.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

/** A provider failure as the API answers it: 400 when not configured, else 502 with the provider's code. */
function providerFailure(err: LlmProviderError) {
  const status = err.code === 'PROVIDER_NOT_CONFIGURED' ? 400 : 502;
  const headers: Record<string, string> = err.retryAfter !== undefined ? { 'Retry-After': String(Math.ceil(err.retryAfter)) } : {};
  return { status, body: errorBody(err.code, err.message, err.toDetails()), headers };
}

/** The LLM group of the catalog: which providers a caller can use, their models, and one-shot text processing. */
export const llmRoutes = [
  defineRoute({
    method: 'GET',
    path: '/llm/providers',
    operationId: 'listLlmProviders',
    summary: "LLM providers and whether each is configured for the caller (the organization's credentials in its workspace, the user's own in the personal workspace, else the service-wide keys)",
    tag,
    auth: 'bearer',
    responses: {
      200: { description: 'providers', schema: z.object({ success: z.literal(true), providers: z.array(providerSchema), problem: z.string().nullable() }) },
      401: { description: 'no or bad credentials' },
    },
    async handler({ principal, services }) {
      const credentials = await services.llm.credentials(callerOf(principal));
      const providers = LLM_PROVIDER_IDS.map((id) => {
        const credential = credentials.byProvider[id];
        return { id, name: LLM_PROVIDER_NAMES[id], configured: Boolean(credential), source: credential?.source ?? null, ...services.llm.catalogue(id) };
      });
      return { status: 200, body: { success: true, providers, problem: credentials.problem } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/llm/models',
    operationId: 'listLlmModels',
    summary: "models per provider: from the provider's list endpoint when it is configured and answers, else from the price table (`source` says which)",
    tag,
    auth: 'bearer',
    query: z.strictObject({ provider: providerId.optional() }),
    responses: {
      200: { description: 'models per provider', schema: z.object({ success: z.literal(true), providers: z.array(providerModelsSchema) }) },
      400: { description: 'unknown provider' },
      401: { description: 'no or bad credentials' },
    },
    async handler({ principal, services, query }) {
      const providers = await services.llm.listModels(callerOf(principal), query.provider ? [query.provider] : LLM_PROVIDER_IDS);
      return { status: 200, body: { success: true, providers } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/llm/process',
    operationId: 'processWithLlm',
    summary: 'put a prompt (and optional system message) to a provider and model; usage and cost from the answer. Over-budget organizations get 402 before any call.',
    tag,
    auth: 'bearer',
    body: processBody,
    responses: {
      200: { description: 'the answer', schema: processReply },
      400: { description: 'invalid input, unknown model (UNKNOWN_MODEL), or provider not configured (PROVIDER_NOT_CONFIGURED)' },
      401: { description: 'no or bad credentials' },
      402: { description: 'the organization has spent its monthly LLM budget (BUDGET_EXCEEDED)' },
      502: { description: 'the provider failed: PROVIDER_ERROR, PROVIDER_TIMEOUT, PROVIDER_RATE_LIMITED (with Retry-After) or PROVIDER_BAD_RESPONSE' },
    },
    async handler({ principal, services, body, command, settle, koa }) {
      const caller = callerOf(principal);
      const provider = body.provider as LlmProviderId;
      const messages: LlmMessage[] = [...(body.system ? [{ role: 'system' as const, content: body.system }] : []), { role: 'user', content: body.prompt }];
      let processed;
      try {
        processed = await processWithLlm(services, command, caller, { provider, model: body.model, messages, temperature: body.temperature, maxTokens: body.maxTokens, signal: abortOnDisconnect(koa) });
      } catch (err) {
        if (err instanceof LlmProviderError) {
          if (err.code !== 'PROVIDER_NOT_CONFIGURED') services.logger.warn({ provider, code: err.code, status: err.status, requestId: command.requestId }, 'LLM provider failed');
          return providerFailure(err);
        }
        if (isLlmAbort(err)) throw new DomainError('REQUEST_ABORTED', 'the client closed the connection', 'cancelled');
        throw err;
      }
      const { result, spend, executionTime } = processed;
      if (spend) await settle(spend.position, spend.streamId);
      const { usage } = result;
      return {
        status: 200,
        body: {
          success: true,
          output: result.text,
          usage: {
            total_tokens: usage.totalTokens,
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.completionTokens,
            cached_tokens: usage.cachedTokens,
            cache_write_tokens: usage.cacheWriteTokens,
            cost: result.cost,
          },
          provider: result.provider,
          model: result.model,
          finishReason: result.finishReason,
          priced: result.priced,
          executionTime,
        },
      };
    },
  }),
];
