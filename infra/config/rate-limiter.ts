import { z } from 'zod';

/** Environment variables of the rate limiter (spread into configSchema; README's configuration table mirrors it). */
export const rateLimiterConfigShape = {
  /** Redis shared by every API process for rate limits (redis:// or rediss://); unset: each process counts in its memory. */
  RATE_LIMIT_REDIS_URL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || /^rediss?:\/\//.test(v), { message: 'must start with redis:// or rediss://' }),
  /** Prefix of the rate limit keys in that Redis (several deployments can share one). */
  RATE_LIMIT_REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:._-]{1,100}$/).default('flowsvc:rl'),
} satisfies Record<string, z.ZodType>;
