import { z } from 'zod';

/** Environment variables of the agents context (spread into configSchema; README's configuration table mirrors it). */
export const agentsConfigShape = {
  /** Estimated tokens (characters / 4) of earlier turns the model sees each turn; older turns are dropped, and the turn says which. */
  AGENTS_CONTEXT_TOKENS: z.coerce.number().int().min(500).max(2_000_000).default(16_000),
  /** Seconds between `ping` events of an agent message stream. */
  AGENTS_SSE_PING_SECONDS: z.coerce.number().int().min(1).max(300).default(15),
  /** A running turn whose process is gone is ended as `interrupted` once this many ms passed its deadline (start + timeoutMs) — at once in a single-process (embedded) service. */
  AGENTS_RECOVERY_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
} satisfies Record<string, z.ZodType>;
