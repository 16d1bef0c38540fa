import { RunInputError, type LlmCapability } from '../domain/runs/index.js';
import { LLM_PROVIDER_IDS, type LlmGateway, type LlmProviderId } from '../ports/llm.js';

/** The LLM capability a run's node kinds get in their context (kinds and prompt conditions live in consumers/runs-kinds/). */
const providerOf = (name: unknown): LlmProviderId => {
  const value = typeof name === 'string' && name ? name : 'offline';
  if (!(LLM_PROVIDER_IDS as readonly string[]).includes(value)) throw new RunInputError('UNKNOWN_PROVIDER', `unknown LLM provider "${value}"`);
  return value as LlmProviderId;
};

/**
 * The LLM port for one run: credentials of the run's organization, or for a personal run those of
 * `userId` (the run's owner) when given; else the service's.
 */
export function llmCapabilityFor(llm: LlmGateway, orgId: string | null, userId: string | null = null): LlmCapability {
  return {
    async complete(request) {
      const provider = await llm.providerFor({ orgId, userId }, providerOf(request.provider));
      const result = await provider.complete({
        model: request.model,
        messages: [{ role: 'user', content: request.prompt }],
        ...(request.temperature !== undefined && { temperature: request.temperature }),
        ...(request.maxTokens !== undefined && { maxTokens: request.maxTokens }),
        signal: request.signal,
      });
      return {
        text: result.text,
        usage: {
          total_tokens: result.usage.totalTokens,
          prompt_tokens: result.usage.promptTokens,
          completion_tokens: result.usage.completionTokens,
          cost: result.cost,
        },
        metadata: { provider: result.provider, model: result.model, finishReason: result.finishReason },
      };
    },
  };
}

