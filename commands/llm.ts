import { performance } from 'node:perf_hooks';
import { spendPeriodOf, spendStreamId } from '../domain/orgs/spend.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import type { LlmCaller, LlmGateway, LlmMessage, LlmProviderId, LlmResult } from '../ports/llm.js';
import type { Logger } from '../ports/logger.js';
import type { CommandContext } from './handle.js';
import { assertWithinBudget, recordLlmSpend } from './orgs-budget.js';

/**
 * One-shot text processing (POST /llm/process): the model must be known, the organization within
 * its budget (decided on the log, before any call), and what the answer cost is recorded as the
 * organization's spend. Provider failures propagate as LlmProviderError for the route to answer.
 */
export interface LlmProcessPorts {
  llm: LlmGateway;
  eventStore: EventStore;
  newId(): string;
  logger: Logger;
}

export interface LlmProcessRequest {
  provider: LlmProviderId;
  model: string;
  messages: LlmMessage[];
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export function unknownModel(llm: LlmGateway, provider: LlmProviderId): DomainError {
  const known = llm.catalogue(provider).models;
  const message = `unknown model for ${provider}; known: ${known.join(', ')} (add others with LLM_PRICES)`;
  return new DomainError('UNKNOWN_MODEL', message, 'invalid', { fields: [{ field: 'body.model', message }], known });
}

export async function processWithLlm(
  ports: LlmProcessPorts,
  context: CommandContext,
  caller: LlmCaller,
  request: LlmProcessRequest,
): Promise<{ result: LlmResult; executionTime: number; spend: { position: number | null; streamId: string } | null }> {
  const { provider, model } = request;
  if (!ports.llm.isKnownModel(provider, model)) throw unknownModel(ports.llm, provider);
  await assertWithinBudget({ eventStore: ports.eventStore, clock: { now: () => context.now } }, caller, provider);
  const started = performance.now();
  const llm = await ports.llm.providerFor(caller, provider);
  const result = await llm.complete({ model, messages: request.messages, temperature: request.temperature, maxTokens: request.maxTokens, signal: request.signal });
  const executionTime = Math.round(performance.now() - started);
  if (!caller.orgId || result.cost <= 0) return { result, executionTime, spend: null };
  // The answer is paid for either way: a failure to record it is logged, not turned into an error the client would retry.
  // The spend id is ours, not the client's X-Request-Id: a reused header must not make calls free.
  try {
    const at = context.now.toISOString();
    const spend = await recordLlmSpend(ports.eventStore, context, { orgId: caller.orgId, amountUsd: result.cost, spendId: `llm-process:${ports.newId()}`, at });
    return { result, executionTime, spend: { position: spend.position, streamId: spendStreamId(caller.orgId, spendPeriodOf(at)) } };
  } catch (err) {
    ports.logger.error({ err, orgId: caller.orgId, cost: result.cost }, 'LLM spend not recorded');
    return { result, executionTime, spend: null };
  }
}
