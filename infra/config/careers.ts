import { z } from 'zod';

/** Environment variables of the careers context (spread into configSchema; README's configuration table mirrors it). */
export const careersConfigShape = {
  /** The organization applications go to when the form names none (a single-company deployment). */
  CAREERS_ORG_ID: z.string().trim().optional().transform((v) => (v === '' ? undefined : v)),
  /** Applications accepted per client IP per hour, and per email address per day. */
  CAREERS_RATE_PER_IP_HOUR: z.coerce.number().int().positive().default(10),
  CAREERS_RATE_PER_EMAIL_DAY: z.coerce.number().int().positive().default(5),
  /** How long a CV download URL in the applications list works. */
  CAREERS_CV_URL_TTL_SECONDS: z.coerce.number().int().min(10).max(7 * 24 * 3600).default(900),
} satisfies Record<string, z.ZodType>;
