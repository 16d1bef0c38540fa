import { performance } from 'node:perf_hooks';
import {
  cliLlmCallsDecider,
  cliLlmCallsStreamId,
  cliLlmSettingsDecider,
  cliLlmSettingsStreamId,
  routeModel,
  type CliLlmSettingsState,
  type ModelMap,
  type ModelRoute,
  type RoutedModel,
} from '../domain/cli-llm/index.js';
import { spendPeriodOf, spendStreamId } from '../domain/orgs/spend.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Principal } from '../domain/shared/principal.js';
import type { EventStore } from '../ports/event-store.js';
import { isLlmAbort, isLlmProviderError, type LlmCaller, type LlmGateway, type LlmProvider, type LlmRequest, type LlmResult } from '../ports/llm.js';
import type { Logger } from '../ports/logger.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import { handleCommand, loadState, type CommandContext } from './handle.js';
import { unknownModel } from './llm.js';
import { assertWithinBudget, recordLlmSpend } from './orgs-budget.js';

/**
 * The CLI's LLM proxy (POST /cli/llm/messages): route the requested model name to a provider and
 * model, check the rate limit and the organization's budget before a paid call, call the provider
 * through the LLM port, then record the organization's spend and the call itself (usage, cost,
 * outcome; the prompt only when the organization logs prompts) on the caller's day stream.
 */
export interface CliLlmPorts {
  llm: LlmGateway;
  eventStore: EventStore;
  rateLimiter: RateLimiter;
  logger: Logger;
  newId(): string;
}

/** The service's routing and limits (CLI_LLM_* variables). */
export interface CliLlmPolicy {
  serviceMap: ModelMap;
  defaultRoute: ModelRoute | null;
  ratePerMinute: number;
}

export const callerOf = (principal: Principal): LlmCaller => ({ orgId: principal.orgId, userId: principal.userId });

/** The organization's settings folded from its stream (defaults when it never set any). */
export async function cliLlmOrgSettings(eventStore: EventStore, orgId: string): Promise<CliLlmSettingsState> {
  return (await loadState(eventStore, cliLlmSettingsStreamId(orgId), cliLlmSettingsDecider)).state;
}

export function setCliLlmOrgSettings(eventStore: EventStore, context: CommandContext, orgId: string, setBy: string, input: { modelMap?: ModelMap; logPrompts?: boolean }) {
  return handleCommand(eventStore, {
    streamId: cliLlmSettingsStreamId(orgId),
    decider: cliLlmSettingsDecider,
    command: { type: 'SetCliLlmOrgSettings', orgId, ...input, setBy, at: context.now.toISOString() },
    context: { ...context, orgId },
  });
}

/** Throws MODEL_NOT_ROUTED (not_found) or UNKNOWN_MODEL (invalid: a paid model without a price could not be budgeted). */
export function routeOrRefuse(llm: LlmGateway, requested: string, policy: CliLlmPolicy, settings: CliLlmSettingsState | null): RoutedModel {
  const routed = routeModel(requested, { organization: settings?.modelMap ?? null, service: policy.serviceMap, defaultRoute: policy.defaultRoute });
  if (!routed) {
    throw new DomainError('MODEL_NOT_ROUTED', `model: ${requested} is not routed to any provider (organization map, CLI_LLM_MODEL_MAP, "<provider>/<model>", CLI_LLM_DEFAULT_PROVIDER)`, 'not_found', {
      field: 'body.model',
    });
  }
  if (!llm.isKnownModel(routed.provider, routed.model)) throw unknownModel(llm, routed.provider);
  return routed;
}

/** An image or document the routed provider cannot take is a 400 naming the block, before any call: never dropped. */
export function refuseUnsupported(provider: LlmProvider, id: string, request: LlmRequest): void {
  const refusal = provider.unsupported?.(request);
  if (refusal) throw new DomainError('UNSUPPORTED_CONTENT', `${refusal.field}: ${refusal.message}`, 'invalid', { field: refusal.field, fields: [{ field: refusal.field, message: refusal.message }], provider: id });
}

export interface CliLlmCall {
  requestedModel: string;
  request: LlmRequest;
  /** The last user turn's text, kept only when the organization logs prompts. */
  promptText: string;
}

export interface PreparedCall {
  routed: RoutedModel;
  logPrompts: boolean;
  /** Calls the provider and records everything; resolves with the result or rejects with the provider's error. */
  run(): Promise<{ result: LlmResult; settle: Array<{ position: number; streamId: string }> }>;
}

/**
 * Everything that can refuse before a provider is called (rate limit, routing, budget, missing
 * credentials) happens here, so the route can still answer with an HTTP error status; `run`
 * then makes the call.
 */
export async function prepareCliLlmCall(ports: CliLlmPorts, context: CommandContext, principal: Principal, policy: CliLlmPolicy, call: CliLlmCall): Promise<PreparedCall> {
  await ports.rateLimiter.hit(`cli-llm:${principal.credential}:${principal.credentialId ?? principal.userId}`, policy.ratePerMinute, 60_000);
  const caller = callerOf(principal);
  const settings = caller.orgId ? await cliLlmOrgSettings(ports.eventStore, caller.orgId) : null;
  const routed = routeOrRefuse(ports.llm, call.requestedModel, policy, settings);
  await assertWithinBudget({ eventStore: ports.eventStore, clock: { now: () => context.now } }, caller, routed.provider);
  const provider = await ports.llm.providerFor(caller, routed.provider);
  refuseUnsupported(provider, routed.provider, call.request);
  const logPrompts = settings?.logPrompts ?? false;
  const callId = ports.newId();

  return {
    routed,
    logPrompts,
    async run() {
      const started = performance.now();
      const request: LlmRequest = { ...call.request, model: routed.model };
      let result: LlmResult | null = null;
      let failure: unknown = null;
      try {
        result = await provider.complete(request);
      } catch (err) {
        failure = err;
      }
      const settle: Array<{ position: number; streamId: string }> = [];
      const at = context.now.toISOString();
      if (result && caller.orgId && result.cost > 0) {
        // Paid either way: a failure to record is logged, not turned into an error the client would retry.
        try {
          const spend = await recordLlmSpend(ports.eventStore, context, { orgId: caller.orgId, amountUsd: result.cost, spendId: `cli-llm:${callId}`, at });
          if (spend.position !== null) settle.push({ position: spend.position, streamId: spendStreamId(caller.orgId, spendPeriodOf(at)) });
        } catch (err) {
          ports.logger.error({ err, orgId: caller.orgId, cost: result.cost }, 'CLI LLM spend not recorded');
        }
      }
      const usage = result?.usage;
      const outcome = result ? 'completed' : isLlmAbort(failure) ? 'aborted' : 'failed';
      try {
        const streamId = cliLlmCallsStreamId(principal.userId, at);
        const recorded = await handleCommand(ports.eventStore, {
          streamId,
          decider: cliLlmCallsDecider,
          command: {
            type: 'RecordCliLlmCall',
            call: {
              callId,
              userId: principal.userId,
              orgId: caller.orgId,
              credential: principal.credential,
              credentialId: principal.credentialId,
              requestedModel: call.requestedModel,
              provider: routed.provider,
              model: result?.model ?? routed.model,
              routedBy: routed.routedBy,
              stream: Boolean(request.stream),
              messages: request.messages.length,
              tools: request.tools?.length ?? 0,
              toolCalls: result?.toolCalls?.length ?? 0,
              outcome,
              stopReason: result?.finishReason ?? null,
              errorCode: failure ? (isLlmProviderError(failure) ? failure.code : isLlmAbort(failure) ? 'ABORTED' : 'INTERNAL_ERROR') : null,
              usage: {
                inputTokens: usage ? usage.promptTokens - usage.cachedTokens - usage.cacheWriteTokens : 0,
                outputTokens: usage?.completionTokens ?? 0,
                cacheReadInputTokens: usage?.cachedTokens ?? 0,
                cacheCreationInputTokens: usage?.cacheWriteTokens ?? 0,
              },
              costUsd: result?.cost ?? 0,
              priced: result?.priced ?? true,
              durationMs: Math.round(performance.now() - started),
              content: logPrompts ? { prompt: call.promptText, answer: result?.text ?? '' } : null,
              at,
            },
          },
          context,
        });
        if (recorded.position !== null) settle.push({ position: recorded.position, streamId });
      } catch (err) {
        ports.logger.error({ err, userId: principal.userId, callId }, 'CLI LLM call not recorded');
      }
      if (!result) throw failure;
      return { result, settle };
    },
  };
}
