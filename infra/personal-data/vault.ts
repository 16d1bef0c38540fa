import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { DomainError } from '../../domain/shared/decider.js';
import type { SecretSealer } from '../../ports/secret-sealer.js';
import type { PersonalDataVault } from '../../ports/personal-data.js';
import type { DocumentCollection } from '../../ports/read-store.js';

/** Where the subjects' keys live: a row per subject, `shredded` once its key was dropped. */
export interface KeyTable {
  get(subjectId: string): Promise<{ key: string | null } | null>;
  /** Inserts unless a row exists; answers the row that is there afterwards. */
  insert(subjectId: string, key: string): Promise<{ key: string | null }>;
  /** Replaces the key by a tombstone (so the subject can never be re-keyed). */
  shred(subjectId: string): Promise<void>;
}

export class SqliteKeyTable implements KeyTable {
  private readonly stmts;
  constructor(db: Database.Database) {
    db.exec('CREATE TABLE IF NOT EXISTS personal_keys (subject TEXT PRIMARY KEY, key TEXT)');
    this.stmts = {
      get: db.prepare<[string], { key: string | null }>('SELECT key FROM personal_keys WHERE subject = ?'),
      insert: db.prepare('INSERT INTO personal_keys (subject, key) VALUES (?, ?) ON CONFLICT(subject) DO NOTHING'),
      shred: db.prepare("INSERT INTO personal_keys (subject, key) VALUES (?, NULL) ON CONFLICT(subject) DO UPDATE SET key = NULL"),
    };
  }
  async get(subjectId: string) {
    return this.stmts.get.get(subjectId) ?? null;
  }
  async insert(subjectId: string, key: string) {
    this.stmts.insert.run(subjectId, key);
    return this.stmts.get.get(subjectId)!;
  }
  async shred(subjectId: string) {
    this.stmts.shred.run(subjectId);
  }
}

type KeyDoc = { _id: string; key: string | null };

export class DocumentKeyTable implements KeyTable {
  constructor(private readonly collection: DocumentCollection<KeyDoc>) {}
  async get(subjectId: string) {
    const doc = await this.collection.findOne({ _id: subjectId });
    return doc ? { key: doc.key } : null;
  }
  async insert(subjectId: string, key: string) {
    try {
      await this.collection.insertOne({ _id: subjectId, key });
    } catch {
      // another writer got there first (duplicate _id): read what is there
    }
    const doc = await this.collection.findOne({ _id: subjectId });
    if (!doc) throw new Error(`personal data key for ${subjectId} could not be stored`);
    return { key: doc.key };
  }
  async shred(subjectId: string) {
    await this.collection.replaceOne({ _id: subjectId }, { _id: subjectId, key: null }, { upsert: true });
  }
}

/** A sealed file: this header, 12 bytes of IV, 16 of GCM tag, then the ciphertext. */
const SEALED_FILE_MAGIC = Buffer.from('PDSEAL1\n', 'latin1');

/** Whether `bytes` is a file sealed by `sealBytes` (a legacy CV stored in clear starts with `%PDF-`). */
export function isSealedFile(bytes: Uint8Array): boolean {
  return bytes.length >= SEALED_FILE_MAGIC.length + 28 && Buffer.from(bytes.buffer, bytes.byteOffset, SEALED_FILE_MAGIC.length).equals(SEALED_FILE_MAGIC);
}

/**
 * AES-256-GCM under a random 32-byte key per subject; the key is stored sealed with the service's
 * SecretSealer (ENCRYPTION_KEY), so the key table alone reveals nothing either.
 */
export class KeyTableVault implements PersonalDataVault {
  constructor(
    private readonly table: KeyTable,
    private readonly sealer: SecretSealer,
    private readonly indexKey: Buffer,
  ) {}

  private async keyFor(subjectId: string, create: boolean): Promise<Buffer | null> {
    let row = await this.table.get(subjectId);
    if (!row && create) row = await this.table.insert(subjectId, this.sealer.seal(randomBytes(32).toString('base64')));
    if (!row || row.key === null) return null;
    return Buffer.from(this.sealer.open(row.key), 'base64');
  }

  async seal(subjectId: string, plaintext: string): Promise<string> {
    const key = await this.keyFor(subjectId, true);
    if (!key) throw new DomainError('PERSONAL_DATA_SHREDDED', 'this subject was erased', 'gone');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `p1.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${data.toString('base64url')}`;
  }

  async open(subjectId: string, sealed: string): Promise<string | null> {
    const key = await this.keyFor(subjectId, false);
    if (!key) return null;
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'p1' || !iv || !tag || data === undefined) throw new Error('not a sealed personal value');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }

  async sealBytes(subjectId: string, plaintext: Uint8Array, aad: string): Promise<Uint8Array> {
    const key = await this.keyFor(subjectId, true);
    if (!key) throw new DomainError('PERSONAL_DATA_SHREDDED', 'this subject was erased', 'gone');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const data = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([SEALED_FILE_MAGIC, iv, cipher.getAuthTag(), data]);
  }

  async openBytes(subjectId: string, sealed: Uint8Array, aad: string): Promise<Uint8Array | null> {
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (!isSealedFile(bytes)) throw new Error('not a sealed personal file');
    const key = await this.keyFor(subjectId, false);
    if (!key) return null;
    const m = SEALED_FILE_MAGIC.length;
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(m, m + 12));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(bytes.subarray(m + 12, m + 28));
    return Buffer.concat([decipher.update(bytes.subarray(m + 28)), decipher.final()]);
  }

  async shred(subjectId: string): Promise<void> {
    await this.table.shred(subjectId);
  }

  blindIndex(value: string): string {
    return createHmac('sha256', this.indexKey).update(value).digest('hex');
  }
}
