import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { prepareCliLlmCall, setCliLlmOrgSettings, type CliLlmPolicy } from '../../commands/cli-llm.js';
import { modelMapSchema } from '../../domain/cli-llm/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { isLlmAbort, isLlmProviderError, type LlmRequest } from '../../ports/llm.js';
import type { Services } from '../../ports/services.js';
import { defineRoute, type RouteInput } from '../route.js';
import { anthropicErrorReply, anthropicErrorType, messageOf, messageReply, messagesBody, MessagesSseWriter, proxyRouteOptions, toLlmRequest } from './cli-llm-anthropic.js';
import { orgParams } from './orgs-schemas.js';

/**
 * The CLI's LLM proxy in the Anthropic Messages format. A client that speaks it (the official SDKs,
 * terminal agents) sets its base URL to `<service>/api/cli/llm` and its API key to a CLI token;
 * the token may come as `x-api-key` or `Authorization: Bearer`. Errors, including 401, come in
 * Anthropic's shape. The organization's model map and prompt logging are set with
 * PUT /orgs/{orgId}/cli-llm-settings.
 */
const tag = 'CLI';

export const policyOf = (services: Services): CliLlmPolicy => {
  const c = services.config;
  return {
    serviceMap: c.CLI_LLM_MODEL_MAP,
    defaultRoute: c.CLI_LLM_DEFAULT_PROVIDER ? { provider: c.CLI_LLM_DEFAULT_PROVIDER, model: c.CLI_LLM_DEFAULT_MODEL ?? null } : null,
    ratePerMinute: c.CLI_LLM_RATE_LIMIT_PER_MINUTE,
  };
};

/** A provider failure as a DomainError the error renderer turns into Anthropic's shape. */
export function asDomainError(err: unknown): unknown {
  if (isLlmProviderError(err)) {
    const details = { ...err.toDetails(), ...(err.retryAfter !== undefined && { retryAfterSeconds: Math.ceil(err.retryAfter) }) };
    switch (err.code) {
      case 'PROVIDER_NOT_CONFIGURED':
        return new DomainError(err.code, err.message, 'invalid', details);
      case 'PROVIDER_RATE_LIMITED':
        return new DomainError(err.code, err.message, 'rate_limited', details);
      case 'PROVIDER_TIMEOUT':
        return new DomainError(err.code, err.message, 'timeout', details);
      default:
        return new DomainError(err.code, err.message, 'upstream', details);
    }
  }
  if (isLlmAbort(err)) return new DomainError('REQUEST_ABORTED', 'the client closed the connection', 'cancelled');
  return err;
}

function abortOnDisconnect(koa: RouteInput<unknown, unknown, unknown>['koa']): AbortSignal {
  const controller = new AbortController();
  koa.res.once('close', () => {
    if (!koa.res.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

const settingsBody = z.strictObject({
  modelMap: modelMapSchema.optional().describe('requested model name (or `prefix*`) → {provider, model?}; replaces the whole map'),
  logPrompts: z.boolean().optional().describe("keep the last user turn and the answer (≤ 2,000 characters each) in each call's audit event"),
});
const settingsReply = z.object({ success: z.literal(true), orgId: z.string(), modelMap: modelMapSchema, logPrompts: z.boolean() });

const messagesRoute = (path: string, operationId: string, note: string) =>
  defineRoute({
    method: 'POST',
    path,
    operationId,
    summary:
      note +
      'LLM proxy for the CLI\'s agent in the Anthropic Messages format (JSON or SSE with `stream: true`); the credential may be sent as `x-api-key`. The model name is routed to a provider by the organization\'s map, CLI_LLM_MODEL_MAP, "<provider>/<model>", or CLI_LLM_DEFAULT_PROVIDER. Errors are `{type: "error", error: {type, message}}`.',
    ...proxyRouteOptions,
    body: messagesBody,
    responses: {
      200: { description: 'the message (or, with stream: true, text/event-stream of Messages events)', schema: messageReply },
      400: { description: 'invalid_request_error: bad input, unknown model, provider not configured', schema: anthropicErrorReply },
      401: { description: 'authentication_error', schema: anthropicErrorReply },
      402: { description: 'billing_error: the organization spent its monthly LLM budget (BUDGET_EXCEEDED)', schema: anthropicErrorReply },
      404: { description: 'not_found_error: the model name is not routed (MODEL_NOT_ROUTED)', schema: anthropicErrorReply },
      429: { description: 'rate_limit_error: CLI_LLM_RATE_LIMIT_PER_MINUTE per credential, or the provider\'s own (Retry-After)', schema: anthropicErrorReply },
      502: { description: 'api_error: the provider failed', schema: anthropicErrorReply },
      504: { description: 'timeout_error: the provider gave no answer within LLM_TIMEOUT_MS', schema: anthropicErrorReply },
    },
    async handler({ principal, services, body, command, settle, koa }) {
      if (body.max_tokens > services.config.CLI_LLM_MAX_TOKENS) {
        throw new DomainError('VALIDATION_FAILED', `max_tokens: at most ${services.config.CLI_LLM_MAX_TOKENS}`, 'invalid', { fields: [{ field: 'body.max_tokens', message: `at most ${services.config.CLI_LLM_MAX_TOKENS}` }] });
      }
      const translated = toLlmRequest(body);
      const signal = abortOnDisconnect(koa);
      const request: LlmRequest = {
        model: body.model,
        messages: translated.messages,
        maxTokens: body.max_tokens,
        ...(body.temperature !== undefined && { temperature: body.temperature }),
        ...(translated.tools && { tools: translated.tools }),
        ...(translated.toolChoice && { toolChoice: translated.toolChoice }),
        ...(translated.stopSequences && { stopSequences: translated.stopSequences }),
        ...(translated.thinking && { thinking: translated.thinking }),
        signal,
      };
      const ports = { llm: services.llm, eventStore: services.eventStore, rateLimiter: services.rateLimiter, logger: services.logger, newId: services.newId };
      const call = { requestedModel: body.model, request, promptText: translated.promptText };
      const messageId = `msg_${services.newId().replace(/-/g, '')}`;
      const routedHeaders = (provider: string, model: string) => ({ 'X-Llm-Provider': provider, 'X-Llm-Model': model });

      if (!body.stream) {
        try {
          const prepared = await prepareCliLlmCall(ports, command, principal!, policyOf(services), call);
          const { result, settle: positions } = await prepared.run();
          for (const p of positions) await settle(p.position, p.streamId);
          return { status: 200, body: messageOf(messageId, body.model, result), headers: routedHeaders(prepared.routed.provider, prepared.routed.model) };
        } catch (err) {
          throw asDomainError(err);
        }
      }

      // Streaming: refusals before the call, and a provider failure before its first output, still
      // answer with an HTTP status; once output flowed a failure is an `error` event.
      const out = new PassThrough();
      const writer = new MessagesSseWriter(out, messageId, body.model);
      let opened: () => void = () => {};
      const firstOutput = new Promise<void>((resolve) => (opened = resolve));
      request.stream = true;
      request.onDelta = (text) => {
        writer.text(text);
        opened();
      };
      request.onToolCallDelta = (delta) => {
        writer.tool(delta);
        opened();
      };
      request.onThinkingDelta = (delta) => {
        writer.thinking(delta);
        opened();
      };
      let prepared;
      try {
        prepared = await prepareCliLlmCall(ports, command, principal!, policyOf(services), call);
      } catch (err) {
        throw asDomainError(err);
      }
      const running = prepared.run().then(
        ({ result }) => writer.finish(result),
        (err) => {
          if (!writer.hasStarted) throw err;
          const mapped = asDomainError(err);
          const status = mapped instanceof DomainError ? ({ invalid: 400, rate_limited: 429, timeout: 504, cancelled: 499 } as Record<string, number>)[mapped.kind] ?? 502 : 500;
          writer.fail(status, mapped instanceof Error ? mapped.message : 'the call failed');
          services.logger.warn({ err, requestId: command.requestId, type: anthropicErrorType(status) }, 'CLI LLM stream failed midway');
        },
      );
      try {
        await Promise.race([firstOutput, running]);
      } catch (err) {
        throw asDomainError(err);
      }
      running.catch(() => {});
      koa.req.socket.setTimeout(0);
      return {
        status: 200,
        body: out,
        headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no', ...routedHeaders(prepared.routed.provider, prepared.routed.model) },
      };
    },
  });

export const cliLlmRoutes = [
  messagesRoute('/cli/llm/messages', 'cliLlmMessages', ''),
  // The Anthropic SDKs append /v1/messages to their base URL: `baseURL: <service>/api/cli/llm` reaches this one.
  messagesRoute('/cli/llm/v1/messages', 'cliLlmMessagesV1', 'The same operation where the Anthropic SDKs look for it (base URL `/api/cli/llm`). '),
  defineRoute({
    method: 'PUT',
    path: '/orgs/{orgId}/cli-llm-settings',
    operationId: 'setOrganizationCliLlmSettings',
    summary: "the organization's routing of model names for the CLI's LLM proxy, and whether its calls' audit events keep the prompt",
    tag,
    auth: 'bearer',
    permission: 'manage_settings',
    params: orgParams,
    body: settingsBody,
    responses: {
      200: { description: 'the settings now', schema: settingsReply },
      400: { description: 'invalid map (VALIDATION_FAILED, INVALID_MODEL_PATTERN)' },
      403: { description: 'role lacks manage_settings' },
      404: { description: 'no such organization' },
    },
    async handler({ params, body, principal, services, command, settle }) {
      const result = await setCliLlmOrgSettings(services.eventStore, command, params.orgId, principal!.userId, body);
      await settle(result.position, `clillmorg-${params.orgId}`);
      return { status: 200, body: { success: true, orgId: params.orgId, modelMap: result.state.modelMap, logPrompts: result.state.logPrompts } };
    },
  }),
];
