import { z } from 'zod';
import { LLM_PROVIDER_IDS } from '../../ports/llm.js';

/** Environment variables of the assistant (spread into configSchema; README's configuration table mirrors it). */
export const assistantConfigShape = {
  /**
   * The assistant's model provider. Unset: the first provider the caller's credentials cover
   * (organization, user, environment: OpenAI, Anthropic, Google, OpenAI-compatible), the offline
   * provider only when none is (commands/llm-default-model.ts, the rule every context shares).
   */
  ASSISTANT_PROVIDER: z.enum(LLM_PROVIDER_IDS).optional(),
  /** The model name; only with ASSISTANT_PROVIDER (unset: that provider's default model). */
  ASSISTANT_MODEL: z.string().min(1).max(200).optional(),
  /** Model calls per answer (the tool-calling loop's maxIterations, 1–50). */
  ASSISTANT_MAX_ITERATIONS: z.coerce.number().int().min(1).max(50).default(8),
  /** Tool runs per answer. */
  ASSISTANT_MAX_TOOL_CALLS: z.coerce.number().int().min(0).max(200).default(16),
  /** Whole answer (model calls and tools), ms. */
  ASSISTANT_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(120_000),
  /** How long a cancel waits for the process running the answer to record it before recording it itself (ms). */
  ASSISTANT_CANCEL_WAIT_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
  /** Earlier messages the model sees each turn (the newest ones; older turns are dropped and the answer says so). */
  ASSISTANT_HISTORY_MESSAGES: z.coerce.number().int().min(0).max(1_000).default(40),
} satisfies Record<string, z.ZodType>;

/**
 * What the shape alone cannot say: a model without its provider would be sent to whichever
 * provider is configured first, and an OpenAI-compatible server has no default model to fall back on.
 */
export function assistantConfigProblems(config: { ASSISTANT_PROVIDER?: string; ASSISTANT_MODEL?: string }): string[] {
  if (config.ASSISTANT_MODEL && !config.ASSISTANT_PROVIDER) return [`ASSISTANT_MODEL: names a model of ASSISTANT_PROVIDER, which is not set (got ${JSON.stringify(config.ASSISTANT_MODEL)})`];
  if (config.ASSISTANT_PROVIDER === 'openai_compatible' && !config.ASSISTANT_MODEL) return ['ASSISTANT_MODEL: required with ASSISTANT_PROVIDER=openai_compatible (such a server has no default model)'];
  return [];
}
