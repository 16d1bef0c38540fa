import { z } from 'zod';

/** Environment variables of the kv context (spread into configSchema; README's configuration table mirrors it). */
export const kvConfigShape = {
  /** Whole budget of one key-value store validation: DNS, connect, TLS, auth, PING and INFO. */
  KV_VALIDATE_TIMEOUT_MS: z.coerce.number().int().positive().max(60_000).default(5_000),
} satisfies Record<string, z.ZodType>;
