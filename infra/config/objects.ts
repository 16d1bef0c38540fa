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
} satisfies Record<string, z.ZodType>;
