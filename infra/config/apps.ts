import { z } from 'zod';

/**
 * Environment variables of app delivery (previews, deployments, public serving; spread into
 * configSchema; README's configuration table mirrors it).
 */
export const appsConfigShape = {
  /**
   * Origin (scheme://host[:port], no path) that serves previews and deployments, e.g.
   * `https://apps.example.net` pointed at this service. Empty (the default): the service serves them
   * itself under `/apps-public/…` on the origin of the request, outside `/api`, and every page is
   * sandboxed by its CSP (`sandbox allow-scripts allow-forms…` without `allow-same-origin`), so the
   * page runs in an opaque origin and reaches no cookie or storage of the service's origin.
   */
  APPS_PUBLIC_ORIGIN: z
    .string()
    .trim()
    .default('')
    .refine((v) => v === '' || /^https?:\/\/[^/?#\s]+$/.test(v), { message: 'must be scheme://host[:port] with no path' }),
  /** Whole budget of one build (esbuild in a worker thread); the worker is terminated past it. */
  APPS_BUILD_TIMEOUT_MS: z.coerce.number().int().positive().max(300_000).default(20_000),
  /** Total bytes a build may output (bundles plus copied files). */
  APPS_BUILD_MAX_OUTPUT_BYTES: z.coerce.number().int().positive().default(20 * 1024 * 1024),
  /** Lifetime of a preview URL. */
  APPS_PREVIEW_TTL_SECONDS: z.coerce.number().int().positive().max(7 * 24 * 3600).default(3600),
  /** Flow calls per client IP per minute through a preview or deployment (`/apps-public/…/_flow`). */
  APPS_PUBLIC_CALLS_PER_MINUTE: z.coerce.number().int().positive().default(30),
  /** Built sites kept in each process's memory (least recently used dropped first; rebuilt from the log on demand). */
  APPS_SITE_CACHE_ENTRIES: z.coerce.number().int().positive().default(64),
} satisfies Record<string, z.ZodType>;
