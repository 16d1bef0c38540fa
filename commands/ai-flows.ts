import { isKnownModel as isKnownNodeModel, LLM_PROVIDER_MODELS, type KnownLlmProvider } from '../domain/flows/index.js';
import { spendPeriodOf, spendStreamId } from '../domain/orgs/spend.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import type { LlmCaller, LlmGateway, LlmProviderId, LlmResult } from '../ports/llm.js';
import type { Logger } from '../ports/logger.js';
import { checkAnswer, type DesignedFlow, type DesignProblem } from './ai-flows-check.js';
import { attemptMessages, type NodeModelHint } from './ai-flows-schema.js';
import type { CommandContext } from './handle.js';
import { assertWithinBudget, recordLlmSpend } from './orgs-budget.js';

/**
 * AI flow generation: picks the designing model, asks it for a flow, checks the answer with the
 * flow domain's rules and asks once more with the problems when it is refused. The caller creates
 * the flow (CreateFlow through the flow aggregate) from what this returns.
 */

/** One retry: a second refused answer rarely turns into a good third one, and each call costs. */
export const MAX_ATTEMPTS = 2;
/** Room for a flow of a few dozen nodes; Anthropic needs an explicit bound anyway. */
const MAX_ANSWER_TOKENS = 8192;


export interface GenerationUsage {
  total_tokens: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** US dollars, every attempt together. */
  cost: number;
}

export interface GeneratedFlow {
  flow: DesignedFlow;
  attempts: number;
  usage: GenerationUsage;
  provider: LlmProviderId;
  model: string;
  /** Where the last recorded spend landed, for read-your-writes on the budget; null when nothing was recorded. */
  spend: { position: number | null; streamId: string } | null;
}

/** What generation uses: the LLM port, and the log its budget is decided on and its spend recorded in. */
export interface GenerationPorts {
  llm: LlmGateway;
  eventStore: EventStore;
  newId(): string;
  logger: Logger;
}

export interface GenerationDeps {
  ports: GenerationPorts;
  context: CommandContext;
  caller: LlmCaller;
  signal?: AbortSignal;
}

const offlineCannotDesign = () =>
  new DomainError(
    'OFFLINE_PROVIDER_CANNOT_DESIGN',
    'the offline provider only echoes its prompt (it exists for tests, demos and dry runs) and cannot design flows: name a configured provider (openai, anthropic, google, openai_compatible) or leave provider out to use the first configured one',
    'invalid',
    { fields: [{ field: 'body.provider', message: 'the offline provider cannot design flows' }] },
  );

/** The provider and model that will design: the request's, else the first configured real provider and its default model (LlmGateway.defaultModel: the rule every context shares). */
export async function chooseDesigner(llm: LlmGateway, caller: LlmCaller, requested: { provider?: LlmProviderId; model?: string }): Promise<{ provider: LlmProviderId; model: string }> {
  if (requested.provider === 'offline') throw offlineCannotDesign();
  let provider: LlmProviderId | undefined = requested.provider;
  let fallbackModel: string | null = provider ? llm.defaultModelOf(provider) : null;
  if (!provider) {
    const credentials = await llm.credentials(caller);
    const chosen = await llm.defaultModel(caller, { credentials });
    if (chosen.provider === 'offline') {
      const where = caller.orgId ? "the organization's LLM credentials (PUT /api/orgs/{orgId}/llm-credentials) or the service's environment" : "the service's environment";
      throw new DomainError('PROVIDER_NOT_CONFIGURED', `no LLM provider with a default model is configured in ${where} (e.g. OPENAI_API_KEY; an OpenAI-compatible server needs provider and model named); the offline provider cannot design flows`, 'invalid', {
        ...(credentials.problem && { problem: credentials.problem }),
      });
    }
    provider = chosen.provider;
    fallbackModel = chosen.model;
  }
  const { models } = llm.catalogue(provider);
  const model = requested.model ?? fallbackModel;
  if (!model) {
    const message = `${provider} has no default model: name one`;
    throw new DomainError('VALIDATION_FAILED', `body.model: ${message}`, 'invalid', { fields: [{ field: 'body.model', message }] });
  }
  if (!llm.isKnownModel(provider, model)) {
    const message = `unknown model for ${provider}; known: ${models.join(', ')} (add others with LLM_PRICES)`;
    throw new DomainError('UNKNOWN_MODEL', message, 'invalid', { fields: [{ field: 'body.model', message }], known: models });
  }
  return { provider, model };
}

/** llm nodes default to the designing provider and model when the flow domain accepts them for nodes, else to its first listed ones. */
export function nodeModelHint(provider: LlmProviderId, model: string): NodeModelHint | null {
  if (isKnownNodeModel(provider, model)) return { llm: provider, model };
  const models = LLM_PROVIDER_MODELS[provider as KnownLlmProvider];
  return models && models.length > 0 ? { llm: provider, model: models[0] } : null;
}

function addUsage(total: GenerationUsage, result: LlmResult): GenerationUsage {
  const u = result.usage;
  return {
    total_tokens: total.total_tokens + u.totalTokens,
    prompt_tokens: total.prompt_tokens + u.promptTokens,
    completion_tokens: total.completion_tokens + u.completionTokens,
    cached_tokens: total.cached_tokens + u.cachedTokens,
    cost: Math.round((total.cost + result.cost) * 1e12) / 1e12,
  };
}

/** The answer is paid for whatever happens next: a failure to record it is logged, not turned into an error the client would retry. */
async function recordSpend(deps: GenerationDeps, cost: number): Promise<GeneratedFlow['spend']> {
  const { ports, context, caller } = deps;
  if (!caller.orgId || cost <= 0) return null;
  try {
    const at = context.now.toISOString();
    // Our own spend id, not the client's X-Request-Id: a reused header must not make calls free.
    const result = await recordLlmSpend(ports.eventStore, context, { orgId: caller.orgId, amountUsd: cost, spendId: `ai-generate-flow:${ports.newId()}`, at });
    return { position: result.position, streamId: spendStreamId(caller.orgId, spendPeriodOf(at)) };
  } catch (err) {
    ports.logger.error({ err, orgId: caller.orgId, cost }, 'LLM spend not recorded');
    return null;
  }
}

/**
 * Asks the model for a flow, at most MAX_ATTEMPTS times. Throws DomainError
 * GENERATED_FLOW_INVALID (unprocessable) (with the last problems) when no answer passes, and lets the provider's
 * LlmProviderError through for the route to answer.
 */
export async function generateFlow(deps: GenerationDeps, request: { description: string; provider: LlmProviderId; model: string }): Promise<GeneratedFlow> {
  const { ports, caller, context } = deps;
  const llm = await ports.llm.providerFor(caller, request.provider);
  const hint = nodeModelHint(request.provider, request.model);
  let usage: GenerationUsage = { total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, cost: 0 };
  let spend: GeneratedFlow['spend'] = null;
  let previous: { answer: string; problems: DesignProblem[] } | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    await assertWithinBudget({ eventStore: ports.eventStore, clock: { now: () => context.now } }, caller, request.provider);
    const result = await llm.complete({ model: request.model, messages: attemptMessages(hint, request.description, previous), maxTokens: MAX_ANSWER_TOKENS, signal: deps.signal });
    usage = addUsage(usage, result);
    spend = (await recordSpend(deps, result.cost)) ?? spend;
    const checked = checkAnswer(result.text);
    if (checked.ok) return { flow: checked.flow, attempts: attempt, usage, provider: request.provider, model: request.model, spend };
    previous = { answer: result.text, problems: checked.problems };
  }
  throw new DomainError('GENERATED_FLOW_INVALID', `the model did not produce a valid flow in ${MAX_ATTEMPTS} attempts; nothing was created`, 'unprocessable', {
    attempts: MAX_ATTEMPTS,
    problems: previous!.problems,
    usage,
  });
}
