/**
 * The object-store port: files people upload (extension PDFs, careers CVs, app-instance files) are
 * kept out of the event log; events hold their keys. Adapters: `infra/object-store/local.ts`
 * (embedded default, under DATA_DIR/objects, downloads through HMAC-signed, expiring URLs the
 * service itself serves) and `infra/object-store/s3.ts` (the S3 API through @aws-sdk/client-s3,
 * presigned URLs). Both pass test/contract/object-store.test.ts.
 *
 * Keys are chosen by the caller (`<context>/<owner>/<id>`), never by the uploader: no user input
 * reaches a path on disk unchecked.
 */
export interface StoredObject {
  key: string;
  size: number;
  contentType: string;
  /** Hex SHA-256 of the bytes, computed while writing. */
  sha256: string;
}

export interface PutObjectOptions {
  contentType: string;
  /** Refuse (and remove what was written) once more than this many bytes arrived. */
  maxBytes?: number;
}

/** One object as `list` gives it. */
export interface ListedObject {
  key: string;
  size: number;
  /** When it was last written (ISO 8601): the orphan sweep's grace period counts from it. */
  lastModified: string;
}

export interface ObjectStore {
  /** Streams `body` to `key` (replacing it); rejects with DomainError `FILE_TOO_LARGE` (too_large) past `maxBytes`. */
  put(key: string, body: AsyncIterable<Uint8Array> | Uint8Array, options: PutObjectOptions): Promise<StoredObject>;
  /** The bytes, or null when there is no such key. */
  get(key: string): Promise<Uint8Array | null>;
  /**
   * Every object whose key starts with `prefix` (a string prefix, e.g. `careers/`), in no promised
   * order, page by page as the store gives them; what is written during the listing may or may not
   * appear. For the orphan sweep (app/object-sweep.ts).
   */
  list(prefix: string): AsyncIterable<ListedObject>;
  /** Idempotent: deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** A URL anyone holding it can GET until `expiresAt`; after that it answers 403 `URL_EXPIRED`. */
  signedUrl(key: string, options: { expiresInSeconds: number; downloadName?: string }): Promise<{ url: string; expiresAt: string }>;
  /**
   * Only where the service itself serves the signed URLs (the local store, through GET /objects/{key}):
   * checks the URL's signature and expiry and gives the object. Rejects with DomainError `URL_EXPIRED`
   * or `URL_INVALID` (forbidden), `OBJECT_NOT_FOUND` (not_found).
   */
  openSigned?(key: string, query: SignedQuery): Promise<{ body: Uint8Array; contentType: string; downloadName?: string }>;
}

/** The query parameters of a signed local download URL. */
export interface SignedQuery {
  expires: string;
  sig: string;
  name?: string;
}
