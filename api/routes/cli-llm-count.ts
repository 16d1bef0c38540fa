import { z } from 'zod';
import { countCliLlmTokens } from '../../commands/cli-llm-count.js';
import { defineRoute } from '../route.js';
import { anthropicErrorReply, messagesBody, proxyRouteOptions, toLlmRequest } from './cli-llm-anthropic.js';
import { asDomainError, policyOf } from './cli-llm.js';

/**
 * Anthropic's token counting for the CLI's proxy: the same body as a message without
 * `max_tokens`, answered `{input_tokens}`. Anthropic-routed models are counted by Anthropic; the
 * others are estimated (commands/cli-llm-estimate.ts), which `X-Llm-Token-Estimate: true` says.
 */
const countBody = messagesBody.extend({ max_tokens: z.number().int().min(1).optional() });
const countReply = z.object({ input_tokens: z.number().int().nonnegative() });

const countRoute = (path: string, operationId: string, note: string) =>
  defineRoute({
    method: 'POST',
    path,
    operationId,
    summary:
      note +
      "Counts a Messages request's input tokens (Anthropic's count_tokens): the model is routed as for a message; Anthropic counts its own, other providers' counts are estimates (header X-Llm-Token-Estimate: true). No charge, no audit event.",
    ...proxyRouteOptions,
    body: countBody,
    responses: {
      200: { description: '{input_tokens}', schema: countReply },
      400: { description: 'invalid_request_error: bad input, unknown model, content the provider cannot take (UNSUPPORTED_CONTENT)', schema: anthropicErrorReply },
      401: { description: 'authentication_error', schema: anthropicErrorReply },
      404: { description: 'not_found_error: the model name is not routed (MODEL_NOT_ROUTED)', schema: anthropicErrorReply },
      429: { description: "rate_limit_error: CLI_LLM_RATE_LIMIT_PER_MINUTE per credential, or the provider's own", schema: anthropicErrorReply },
      502: { description: 'api_error: the provider failed', schema: anthropicErrorReply },
    },
    async handler({ principal, services, body }) {
      const translated = toLlmRequest(body);
      const request = {
        model: body.model,
        messages: translated.messages,
        ...(translated.tools && { tools: translated.tools }),
        ...(translated.toolChoice && { toolChoice: translated.toolChoice }),
        ...(translated.thinking && { thinking: translated.thinking }),
      };
      const ports = { llm: services.llm, eventStore: services.eventStore, rateLimiter: services.rateLimiter, logger: services.logger, newId: services.newId, tokenizer: services.tokenizer };
      try {
        const counted = await countCliLlmTokens(ports, principal!, policyOf(services), body.model, request);
        return {
          status: 200,
          body: { input_tokens: counted.inputTokens },
          headers: { 'X-Llm-Provider': counted.provider, 'X-Llm-Model': counted.model, 'X-Llm-Token-Estimate': String(counted.estimated) },
        };
      } catch (err) {
        throw asDomainError(err);
      }
    },
  });

export const cliLlmCountRoutes = [
  countRoute('/cli/llm/messages/count_tokens', 'cliLlmCountTokens', ''),
  countRoute('/cli/llm/v1/messages/count_tokens', 'cliLlmCountTokensV1', 'The same operation where the Anthropic SDKs look for it. '),
];
