import { z } from 'zod';
import { cliLlmProviderSchema, modelMapSchema } from '../../domain/cli-llm/index.js';

/** Environment variables of the cli-llm context (spread into configSchema; README's configuration table mirrors it). */
export const cliLlmConfigShape = {
  /** JSON: requested model name (or `prefix*`) → {provider, model?}; consulted after the organization's own map. */
  CLI_LLM_MODEL_MAP: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v || v.trim() === '') return {};
      let json: unknown;
      try {
        json = JSON.parse(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON: {"claude-*": {"provider": "openai", "model": "gpt-4o"}}' });
        return z.NEVER;
      }
      const parsed = modelMapSchema.safeParse(json);
      if (!parsed.success) {
        ctx.addIssue({ code: 'custom', message: `not a model map: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` });
        return z.NEVER;
      }
      return parsed.data;
    }),
  /** Provider for a requested model no map routes; unset: such a request answers 404 not_found_error. */
  CLI_LLM_DEFAULT_PROVIDER: z
    .string()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .pipe(cliLlmProviderSchema.optional()),
  /** Model for the default provider; unset: the requested name. */
  CLI_LLM_DEFAULT_MODEL: z
    .string()
    .trim()
    .max(200)
    .optional()
    .transform((v) => (v === '' ? undefined : v)),
  /** Calls per minute per credential (CLI token, API key or JWT's user). */
  CLI_LLM_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(60),
  /** Largest max_tokens a request may ask for. */
  CLI_LLM_MAX_TOKENS: z.coerce.number().int().positive().default(64_000),
  /** Body limit of the proxy's routes: base64 screenshots and PDFs do not fit BODY_LIMIT_BYTES (Anthropic takes 32 MB). */
  CLI_LLM_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(256 * 1024 * 1024).default(32 * 1024 * 1024),
} satisfies Record<string, z.ZodType>;
