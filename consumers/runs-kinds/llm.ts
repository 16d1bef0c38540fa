import type { Condition } from '../../domain/flows/node-data.js';
import {
  conditionQuestion,
  parseYesNo,
  renderTemplate,
  renderValueAsText,
  RunInputError,
  type NodeKind,
  type NodeKindContext,
  type NodeUsage,
  type RunNode,
} from '../../domain/runs/index.js';
import { assertWithinBudget } from '../../commands/orgs-budget.js';
import type { Clock } from '../../infra/ports/clock.js';
import type { EventStore } from '../../infra/ports/event-store.js';
import { LLM_PROVIDER_IDS, type LlmCaller, type LlmGateway, type LlmMessage, type LlmProviderId, type LlmResult } from '../../infra/ports/llm.js';

/**
 * The llm kind: `data.prompt` rendered over the node's context is the user message,
 * `data.agentObjective` rendered (when set) the system message; `data.model`, `temperature` and
 * `maxTokens` as they stand after overrideConfig (the worker passes effectiveNodeData). A blank
 * prompt puts the node's input to the model as text.
 * Credentials and budget are those of the context's `orgId` (see index.ts); in a personal run the
 * context's optional `userId` (the run's owner) brings that user's own credentials. Provider failures
 * propagate as LlmProviderError, a stop as LlmAbortError, an organization over budget as
 * DomainError BUDGET_EXCEEDED (payment_required), all before or instead of an output.
 */

/** What the llm kind uses: the LLM port, and the log and clock the budget is decided on. */
export interface LlmKindPorts {
  llm: LlmGateway;
  eventStore: EventStore;
  clock: Clock;
}

export function providerOf(data: RunNode['data']): LlmProviderId {
  const llm = data.llm;
  if (typeof llm !== 'string' || llm.trim() === '') throw new RunInputError('LLM_PROVIDER_MISSING', 'the node names no LLM provider (data.llm)');
  if (!(LLM_PROVIDER_IDS as readonly string[]).includes(llm)) throw new RunInputError('LLM_PROVIDER_UNKNOWN', `unknown LLM provider ${llm}; known: ${LLM_PROVIDER_IDS.join(', ')}`);
  return llm as LlmProviderId;
}

/** The offline provider accepts any model name, so a node may leave it out. */
export function modelOf(data: RunNode['data'], provider: LlmProviderId): string {
  if (typeof data.model === 'string' && data.model.trim() !== '') return data.model;
  if (provider === 'offline') return 'offline';
  throw new RunInputError('LLM_MODEL_MISSING', `the node names no model for ${provider} (data.model)`);
}

const numberOr = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** The seed's usage shape; cached input tokens added when the provider reported some. */
export function usageOf(result: LlmResult): NodeUsage {
  return {
    total_tokens: result.usage.totalTokens,
    prompt_tokens: result.usage.promptTokens,
    completion_tokens: result.usage.completionTokens,
    cost: result.cost,
    ...(result.usage.cachedTokens > 0 && { cached_tokens: result.usage.cachedTokens }),
  };
}

/** Metadata of every llm answer; the offline provider's always say `offline: true`. */
export function llmMetadata(result: LlmResult): Record<string, unknown> {
  return {
    provider: result.provider,
    model: result.model,
    finishReason: result.finishReason,
    ...(!result.priced && { priced: false }),
    ...(result.provider === 'offline' && { offline: true }),
  };
}

export function llmMessages(data: RunNode['data'], context: NodeKindContext): LlmMessage[] {
  const messages: LlmMessage[] = [];
  if (typeof data.agentObjective === 'string' && data.agentObjective.trim() !== '') {
    messages.push({ role: 'system', content: renderTemplate(data.agentObjective, context) });
  }
  const prompt = typeof data.prompt === 'string' && data.prompt.trim() !== '' ? renderTemplate(data.prompt, context) : renderValueAsText(context.input);
  messages.push({ role: 'user', content: prompt });
  return messages;
}

export function orgIdOf(context: NodeKindContext): string | null {
  const orgId = (context as NodeKindContext & { orgId?: unknown }).orgId;
  if (orgId === null || typeof orgId === 'string') return orgId;
  // Guessing "personal" here would spend the service-wide key and skip the organization's budget.
  throw new RunInputError('CAPABILITY_MISSING', 'the worker passed no orgId in the node context (null for a personal flow)');
}

/** The run owner's id, when the worker passes it: a personal run then uses the owner's own keys before the service's. */
export function userIdOf(context: NodeKindContext): string | null {
  const userId = (context as NodeKindContext & { userId?: unknown }).userId;
  return typeof userId === 'string' && userId !== '' ? userId : null;
}

async function complete(ports: LlmKindPorts, caller: LlmCaller, provider: LlmProviderId, request: { model: string; messages: LlmMessage[]; temperature?: number; maxTokens?: number; signal: AbortSignal }) {
  await assertWithinBudget(ports, caller, provider);
  const llm = await ports.llm.providerFor(caller, provider);
  return llm.complete(request);
}

export function llmKind(ports: LlmKindPorts): NodeKind {
  return {
    type: 'llm',
    async execute(node, context) {
      const caller = { orgId: orgIdOf(context), userId: userIdOf(context) };
      const provider = providerOf(node.data);
      const model = modelOf(node.data, provider);
      const result = await complete(ports, caller, provider, {
        model,
        messages: llmMessages(node.data, context),
        temperature: numberOr(node.data.temperature),
        maxTokens: numberOr(node.data.maxTokens),
        signal: context.signal,
      });
      return { output: result.text, usage: usageOf(result), metadata: llmMetadata(result) };
    },
  };
}

export interface PromptConditionAnswer {
  result: boolean;
  metadata: Record<string, unknown>;
  /** What the question cost; the worker may add it to the node's usage. */
  usage: NodeUsage;
}

/** Enough room for "Yes." from a model that warms up with a word or two, not for an essay. */
const QUESTION_MAX_TOKENS = 16;

/**
 * A usePrompt condition: the yes/no question of conditionQuestion put to the node's model
 * (`data.llm` / `data.model`, overrideConfig already applied by the caller), read by parseYesNo.
 * An answer that is neither yes nor no counts as false, and the metadata says so
 * (`unparseable: true`, with the answer). A node without `llm` cannot answer: RunInputError
 * CONDITION_NEEDS_MODEL. Provider failures propagate like an llm node's.
 */
export async function answerPromptCondition(
  ports: LlmKindPorts,
  caller: LlmCaller,
  nodeData: RunNode['data'],
  condition: Condition,
  output: unknown,
  signal: AbortSignal,
): Promise<PromptConditionAnswer> {
  if (typeof nodeData.llm !== 'string' || nodeData.llm.trim() === '') {
    throw new RunInputError('CONDITION_NEEDS_MODEL', 'a usePrompt condition needs the node to name an LLM provider (data.llm) to ask');
  }
  const provider = providerOf(nodeData);
  const model = modelOf(nodeData, provider);
  const result = await complete(ports, caller, provider, {
    model,
    messages: [{ role: 'user', content: conditionQuestion(condition, output) }],
    temperature: 0,
    maxTokens: QUESTION_MAX_TOKENS,
    signal,
  });
  const parsed = parseYesNo(result.text);
  const answer = result.text.length > 200 ? `${result.text.slice(0, 200)}…` : result.text;
  return {
    result: parsed === true,
    metadata: { ...llmMetadata(result), answer, ...(parsed === null && { unparseable: true }) },
    usage: usageOf(result),
  };
}
