import { z } from 'zod';

const optional = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

/** Environment variables of the object store (spread into configSchema; README's configuration table mirrors it). */
export const objectsConfigShape = {
  /** `local`: files under DATA_DIR/objects, downloads signed by the service; `s3`: any S3-compatible server. */
  OBJECT_STORE: z.enum(['local', 's3']).default('local'),
  /** Signs the local store's download URLs (32+ characters); generated under DATA_DIR/keys when unset. */
  OBJECT_URL_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  S3_ENDPOINT: optional.refine((v) => v === undefined || /^https?:\/\//.test(v), { message: 'must be an http(s) URL' }),
  S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name').default('flowsvc'),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: optional,
  S3_SECRET_ACCESS_KEY: optional,
  /** Path-style addressing (`endpoint/bucket/key`): what self-hosted S3 servers expect. */
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Key prefix inside the bucket, so several deployments can share one bucket. */
  S3_PREFIX: z.string().regex(/^([A-Za-z0-9._-]+\/)*$/, 'must be empty or end with /').default(''),
  /** How often worker processes sweep the store for files no event names (app/object-sweep.ts); first at start; 0: never. */
  OBJECT_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(3_600_000),
  /** A file no event names is removed only once older than this (an upload whose event is on its way is left alone). */
  OBJECT_ORPHAN_GRACE_MS: z.coerce.number().int().min(60_000).default(3_600_000),
} satisfies Record<string, z.ZodType>;
