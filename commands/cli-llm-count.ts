import type { Principal } from '../domain/shared/principal.js';
import type { LlmRequest } from '../ports/llm.js';
import type { Tokenizer } from '../ports/tokenizer.js';
import { cliLlmOrgSettings, callerOf, refuseUnsupported, routeOrRefuse, type CliLlmPolicy, type CliLlmPorts } from './cli-llm.js';
import { estimateInputTokens } from './cli-llm-estimate.js';

/**
 * POST /cli/llm/messages/count_tokens: the request is routed as a call would be, then counted by
 * the provider when it has an endpoint for it (Anthropic's, free of charge), else estimated
 * (commands/cli-llm-estimate.ts). Counting is free, so no budget check and no audit event; it
 * does count against the credential's rate limit, as a call would.
 */
export interface CountedTokens {
  inputTokens: number;
  estimated: boolean;
  provider: string;
  model: string;
}

export async function countCliLlmTokens(ports: CliLlmPorts & { tokenizer: Tokenizer }, principal: Principal, policy: CliLlmPolicy, requestedModel: string, request: LlmRequest): Promise<CountedTokens> {
  await ports.rateLimiter.hit(`cli-llm:${principal.credential}:${principal.credentialId ?? principal.userId}`, policy.ratePerMinute, 60_000);
  const caller = callerOf(principal);
  const settings = caller.orgId ? await cliLlmOrgSettings(ports.eventStore, caller.orgId) : null;
  const routed = routeOrRefuse(ports.llm, requestedModel, policy, settings);
  const provider = await ports.llm.providerFor(caller, routed.provider);
  // Content the provider would refuse is refused here too: a count for a call that cannot be made would mislead.
  refuseUnsupported(provider, routed.provider, request);
  const routedRequest = { ...request, model: routed.model };
  if (provider.countTokens) return { inputTokens: await provider.countTokens(routedRequest), estimated: false, provider: routed.provider, model: routed.model };
  const counter = await ports.tokenizer.counterFor({ provider: routed.provider, model: routed.model });
  return { inputTokens: estimateInputTokens(routedRequest, counter), estimated: true, provider: routed.provider, model: routed.model };
}
