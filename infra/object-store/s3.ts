import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ListedObject, ObjectStore, PutObjectOptions, StoredObject } from '../../ports/object-store.js';
import { assertObjectKey } from './keys.js';
import { MeteredBody } from './metered-body.js';
import { safeDownloadName } from './local.js';

export interface S3ObjectStoreOptions {
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  prefix: string;
  /** The presigned URLs' signing time (tests move it). */
  now: () => Date;
}

/** Parts of a multipart upload (S3's minimum is 5 MiB): what one upload holds in memory at most. */
const PART_BYTES = 8 * 1024 * 1024;

/**
 * The object store over the S3 API (@aws-sdk/client-s3). A body smaller than one part is one
 * PutObject; a larger one a multipart upload of 8 MiB parts, so memory stays bounded whatever the
 * size, and a refused or failed upload is aborted (nothing stored). The SHA-256 is computed while
 * streaming (kept as `sha256` metadata on single-part objects; a multipart upload takes its metadata
 * before the hash is known). Download URLs are presigned GETs: the S3
 * server checks their signature and expiry (answering 403 after it).
 */
export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;

  constructor(private readonly options: S3ObjectStoreOptions) {
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle,
      ...(options.accessKeyId && options.secretAccessKey ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } } : {}),
      // Checksums only where the API requires them: self-hosted servers differ in what they accept.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private objectKey(key: string): string {
    assertObjectKey(key);
    return `${this.options.prefix}${key}`;
  }

  async put(key: string, body: AsyncIterable<Uint8Array> | Uint8Array, options: PutObjectOptions): Promise<StoredObject> {
    const Key = this.objectKey(key);
    const Bucket = this.options.bucket;
    const metered = new MeteredBody(body, options.maxBytes);
    let buffered: Uint8Array[] = [];
    let bufferedBytes = 0;
    let uploadId: string | undefined;
    const parts: { ETag: string; PartNumber: number }[] = [];

    const flushPart = async () => {
      if (!uploadId) {
        const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket, Key, ContentType: options.contentType }));
        uploadId = created.UploadId!;
      }
      const Body = Buffer.concat(buffered, bufferedBytes);
      buffered = [];
      bufferedBytes = 0;
      const PartNumber = parts.length + 1;
      const part = await this.client.send(new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body, ContentLength: Body.length }));
      parts.push({ ETag: part.ETag!, PartNumber });
    };

    try {
      for await (const chunk of metered) {
        buffered.push(chunk);
        bufferedBytes += chunk.length;
        if (bufferedBytes >= PART_BYTES) await flushPart();
      }
      const sha256 = metered.sha256();
      if (!uploadId) {
        const Body = Buffer.concat(buffered, bufferedBytes);
        await this.client.send(new PutObjectCommand({ Bucket, Key, Body, ContentLength: Body.length, ContentType: options.contentType, Metadata: { sha256 } }));
      } else {
        if (bufferedBytes > 0) await flushPart();
        await this.client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
      }
      return { key, size: metered.size, contentType: options.contentType, sha256 };
    } catch (err) {
      if (uploadId) await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId })).catch(() => {});
      throw err;
    }
  }

  async get(key: string): Promise<Uint8Array | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }));
      return out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const Key = this.objectKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key }));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    const own = this.options.prefix;
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: `${own}${prefix}`, ContinuationToken }));
      for (const o of page.Contents ?? []) {
        if (!o.Key?.startsWith(own)) continue;
        yield { key: o.Key.slice(own.length), size: o.Size ?? 0, lastModified: (o.LastModified ?? new Date(0)).toISOString() };
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  async signedUrl(key: string, options: { expiresInSeconds: number; downloadName?: string }) {
    const expiresIn = Math.max(1, Math.floor(options.expiresInSeconds));
    const signingDate = this.options.now();
    const command = new GetObjectCommand({
      Bucket: this.options.bucket,
      Key: this.objectKey(key),
      ...(options.downloadName ? { ResponseContentDisposition: `attachment; filename="${safeDownloadName(options.downloadName)}"` } : {}),
    });
    const url = await getSignedUrl(this.client, command, { expiresIn, signingDate });
    return { url, expiresAt: new Date(signingDate.getTime() + expiresIn * 1000).toISOString() };
  }

  close(): void {
    this.client.destroy();
  }
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
