import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { loadOrCreateKey } from '../auth/key-material.js';
import { LocalObjectStore } from './local.js';

/**
 * The object store the configuration asks for (OBJECT_STORE=local|s3; infra/config/objects.ts).
 * S3's SDK is imported only when configured: it costs a fifth of a second of start-up.
 */
export async function createObjectStore(config: Config, now: () => Date): Promise<ObjectStore> {
  if (config.OBJECT_STORE === 's3') {
    const { S3ObjectStore } = await import('./s3.js');
    return new S3ObjectStore({
      endpoint: config.S3_ENDPOINT,
      bucket: config.S3_BUCKET,
      region: config.S3_REGION,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
      forcePathStyle: config.S3_FORCE_PATH_STYLE,
      prefix: config.S3_PREFIX,
      now,
    });
  }
  const secret = config.OBJECT_URL_SECRET
    ? createHash('sha256').update(config.OBJECT_URL_SECRET).digest()
    : loadOrCreateKey(undefined, config.DATA_DIR, 'objects.key');
  return new LocalObjectStore(join(config.DATA_DIR, 'objects'), secret, now, (config.PUBLIC_URL ?? '').replace(/\/+$/, ''));
}
