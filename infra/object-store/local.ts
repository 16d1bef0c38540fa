import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { DomainError } from '../../domain/shared/decider.js';
import type { ListedObject, ObjectStore, PutObjectOptions, SignedQuery, StoredObject } from '../../ports/object-store.js';
import { assertObjectKey } from './keys.js';
import { MeteredBody } from './metered-body.js';

interface Meta {
  contentType: string;
  size: number;
  sha256: string;
}

/**
 * The embedded object store: files under `<root>/data/<key>`, their content type and hash beside them
 * under `<root>/meta/<key>.json`. Writes go to `<root>/tmp` first and are renamed into place, so a
 * reader never sees half a file and a refused upload leaves nothing. Download URLs point at the
 * service (`/api/objects/<key>?expires=&name=&sig=`), signed with HMAC-SHA256 over key, expiry and name.
 */
export class LocalObjectStore implements ObjectStore {
  private readonly root: string;

  constructor(
    root: string,
    private readonly secret: Buffer,
    private readonly now: () => Date,
    /** Prefix of the download URLs: the service's public URL, or '' for a path relative to it. */
    private readonly baseUrl = '',
  ) {
    this.root = resolve(root);
  }

  private pathOf(area: 'data' | 'meta', key: string): string {
    assertObjectKey(key);
    const base = join(this.root, area);
    const path = resolve(base, area === 'meta' ? `${key}.json` : key);
    if (!path.startsWith(base + sep)) throw new DomainError('OBJECT_KEY_INVALID', 'object key leaves the store', 'invalid');
    return path;
  }

  async put(key: string, body: AsyncIterable<Uint8Array> | Uint8Array, options: PutObjectOptions): Promise<StoredObject> {
    const target = this.pathOf('data', key);
    const tmpDir = join(this.root, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    const tmp = join(tmpDir, randomUUID());
    const metered = new MeteredBody(body, options.maxBytes);
    const out = createWriteStream(tmp, { mode: 0o600 });
    const closed = new Promise<void>((ok, fail) => {
      out.on('close', ok);
      out.on('error', fail);
    });
    try {
      for await (const chunk of metered) {
        if (!out.write(chunk)) await new Promise<void>((ok) => out.once('drain', ok));
      }
      out.end();
      await closed;
      await mkdir(dirname(target), { recursive: true });
      const meta: Meta = { contentType: options.contentType, size: metered.size, sha256: metered.sha256() };
      const metaPath = this.pathOf('meta', key);
      await mkdir(dirname(metaPath), { recursive: true });
      await writeFile(metaPath, JSON.stringify(meta), { mode: 0o600 });
      await rename(tmp, target);
      return { key, ...meta };
    } catch (err) {
      out.destroy();
      await closed.catch(() => {});
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Uint8Array | null> {
    try {
      return await readFile(this.pathOf('data', key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf('data', key), { force: true });
    await rm(this.pathOf('meta', key), { force: true });
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    const base = join(this.root, 'data');
    // Start at the deepest directory the prefix names whole, then filter by the full prefix.
    const dir = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    if (dir && dir.split('/').some((s) => s === '..' || s === '.' || s === '')) return;
    const walk = async function* (relative: string): AsyncGenerator<ListedObject> {
      let entries;
      try {
        entries = await readdir(join(base, relative), { withFileTypes: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      for (const entry of entries) {
        const key = relative ? `${relative}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (prefix.startsWith(`${key}/`) || key.startsWith(prefix) || `${key}/`.startsWith(prefix)) yield* walk(key);
        } else if (entry.isFile() && key.startsWith(prefix)) {
          const info = await stat(join(base, key)).catch(() => null);
          if (info) yield { key, size: info.size, lastModified: info.mtime.toISOString() };
        }
      }
    };
    yield* walk(dir);
  }

  async signedUrl(key: string, options: { expiresInSeconds: number; downloadName?: string }) {
    assertObjectKey(key);
    const expires = Math.floor(this.now().getTime() / 1000) + Math.max(1, Math.floor(options.expiresInSeconds));
    const name = options.downloadName ? safeDownloadName(options.downloadName) : undefined;
    const query = new URLSearchParams({ expires: String(expires), ...(name ? { name } : {}), sig: this.sign(key, String(expires), name) });
    // One path segment (`/` as %2F): GET /objects/{key}.
    return { url: `${this.baseUrl}/api/objects/${encodeURIComponent(key)}?${query}`, expiresAt: new Date(expires * 1000).toISOString() };
  }

  async openSigned(key: string, query: SignedQuery) {
    const expected = Buffer.from(this.sign(key, query.expires, query.name));
    const given = Buffer.from(query.sig ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new DomainError('URL_INVALID', 'the download URL is not valid', 'forbidden');
    }
    if (!/^\d{1,12}$/.test(query.expires) || Number(query.expires) * 1000 <= this.now().getTime()) {
      throw new DomainError('URL_EXPIRED', 'the download URL has expired; ask for a new one', 'forbidden');
    }
    const body = await this.get(key);
    if (!body) throw new DomainError('OBJECT_NOT_FOUND', 'object not found', 'not_found');
    let contentType = 'application/octet-stream';
    try {
      contentType = (JSON.parse(await readFile(this.pathOf('meta', key), 'utf8')) as Meta).contentType;
    } catch {
      // metadata lost: served as bytes
    }
    return { body, contentType, downloadName: query.name };
  }

  private sign(key: string, expires: string, name: string | undefined): string {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}\n${name ?? ''}`).digest('base64url');
  }
}

/** A download name for Content-Disposition: no path, no quotes or control characters, bounded. */
export function safeDownloadName(name: string): string {
  const cleaned = name
    .replace(/[\p{Cc}"\\/]/gu, '_')
    .trim()
    .slice(0, 120);
  return cleaned || 'download';
}
