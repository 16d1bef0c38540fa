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
import type { Clock } from '../../ports/clock.js';
import type { EventStore } from '../../ports/event-store.js';
import { LLM_PROVIDER_IDS, type LlmCaller, type LlmGateway, type LlmMessage, type LlmProviderId, type LlmResult, type LlmTool } from '../../ports/llm.js';
import { LOAD_SKILL_TOOL, loadSkillResult, loadSkillTool, withSkills, type SkillContent, type SkillScope } from '../../domain/skills/index.js';
import type { SkillsReadModel } from '../../ports/skills.js';

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
  /** The skills active for the node's flow (docs/skills.md); absent: no skill is injected. */
  skills?: SkillsReadModel;
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

export function llmMessages(data: RunNode['data'], context: NodeKindContext, skills: readonly SkillContent[] = []): LlmMessage[] {
  const messages: LlmMessage[] = [];
  const objective = typeof data.agentObjective === 'string' && data.agentObjective.trim() !== '' ? renderTemplate(data.agentObjective, context) : null;
  // Skills: only each active skill's name and short description; the content comes through load_skill.
  const system = withSkills(objective, skills);
  if (system !== null) messages.push({ role: 'system', content: system });
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

/** The run's owner, organization and workspace when the worker passes them: the skills' scope without reading the flow. */
function runScopeOf(context: NodeKindContext): SkillScope | undefined {
  const userId = userIdOf(context);
  const { orgId, workspaceId } = context as NodeKindContext & { orgId?: unknown; workspaceId?: unknown };
  if (userId === null) return undefined;
  if (orgId === null) return { userId, orgId: null, workspaceId: null };
  if (typeof orgId === 'string' && (typeof workspaceId === 'string' || workspaceId === null)) return { userId, orgId, workspaceId };
  return undefined;
}

async function complete(
  ports: LlmKindPorts,
  caller: LlmCaller,
  provider: LlmProviderId,
  request: { model: string; messages: LlmMessage[]; temperature?: number; maxTokens?: number; signal: AbortSignal; tools?: LlmTool[]; toolChoice?: { type: 'auto' } | { type: 'none' } },
) {
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
      const skills = ports.skills ? await ports.skills.activeForFlow(context.flowId, runScopeOf(context)) : [];
      const request = { model, temperature: numberOr(node.data.temperature), maxTokens: numberOr(node.data.maxTokens), signal: context.signal };
      const messages = llmMessages(node.data, context, skills);
      if (skills.length === 0) {
        const result = await complete(ports, caller, provider, { ...request, messages });
        return { output: result.text, usage: usageOf(result), metadata: llmMetadata(result) };
      }
      const { result, usage, loaded } = await completeWithSkills(ports, caller, provider, request, messages, skills);
      return { output: result.text, usage, metadata: { ...llmMetadata(result), skills: { injected: skills.map((s) => s.id), loaded } } };
    },
  };
}

/** Rounds of load_skill calls an llm node allows before the model must answer (the last round offers no tool). */
export const MAX_SKILL_ROUNDS = 4;

/**
 * The node's call with its skills: `load_skill` offered as a tool; each call is answered with the
 * skill's content (or an error naming the active skills) and the model asked again, at most
 * MAX_SKILL_ROUNDS times; usage and cost are summed over the calls.
 */
async function completeWithSkills(
  ports: LlmKindPorts,
  caller: LlmCaller,
  provider: LlmProviderId,
  request: { model: string; temperature?: number; maxTokens?: number; signal: AbortSignal },
  initial: LlmMessage[],
  skills: readonly SkillContent[],
): Promise<{ result: LlmResult; usage: NodeUsage; loaded: string[] }> {
  const messages = [...initial];
  const loaded: string[] = [];
  let total: NodeUsage | null = null;
  for (let round = 0; ; round++) {
    const last = round >= MAX_SKILL_ROUNDS;
    const result = await complete(ports, caller, provider, { ...request, messages, tools: [loadSkillTool as unknown as LlmTool], toolChoice: last ? { type: 'none' } : { type: 'auto' } });
    const usage = usageOf(result);
    total = total === null ? usage : addUsage(total, usage);
    const calls = result.toolCalls ?? [];
    if (calls.length === 0 || last) return { result, usage: total, loaded };
    const toolResults = calls.map((call) => {
      if (call.name !== LOAD_SKILL_TOOL) return { toolCallId: call.id, name: call.name, content: `Unknown tool ${call.name}; only ${LOAD_SKILL_TOOL} is offered.`, isError: true };
      const answer = loadSkillResult(skills, call.input);
      if (answer.skillId && !loaded.includes(answer.skillId)) loaded.push(answer.skillId);
      return { toolCallId: call.id, name: call.name, content: answer.content, isError: answer.isError };
    });
    messages.push({ role: 'assistant', content: result.text, toolCalls: calls }, { role: 'user', content: '', toolResults });
  }
}

function addUsage(a: NodeUsage, b: NodeUsage): NodeUsage {
  const n = (v: unknown) => (typeof v === 'number' ? v : 0);
  const cached = n(a.cached_tokens) + n(b.cached_tokens);
  return {
    total_tokens: a.total_tokens + b.total_tokens,
    prompt_tokens: n(a.prompt_tokens) + n(b.prompt_tokens),
    completion_tokens: n(a.completion_tokens) + n(b.completion_tokens),
    cost: a.cost + b.cost,
    ...(cached > 0 && { cached_tokens: cached }),
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
