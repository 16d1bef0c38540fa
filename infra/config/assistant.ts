import { z } from 'zod';
import { LLM_PROVIDER_IDS } from '../../ports/llm.js';

/** Environment variables of the assistant (spread into configSchema; README's configuration table mirrors it). */
export const assistantConfigShape = {
  /** The assistant's model provider; the offline provider (deterministic, no network) unless set. Credentials as for LLM nodes (organization, user, environment). */
  ASSISTANT_PROVIDER: z.enum(LLM_PROVIDER_IDS).default('offline'),
  /** The model name (any name for offline); required in practice for the other providers. */
  ASSISTANT_MODEL: z.string().min(1).max(200).default('offline'),
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
