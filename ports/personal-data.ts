/**
 * Crypto-shredding of personal data (careers applications): each subject (an application) has its
 * own data key, kept OUTSIDE the event log in a key table (embedded: SQLite beside the checkpoints;
 * distributed: the `_personal_keys` collection of the read store; never a projection's collection,
 * so a rebuild keeps it). Events carry only what `seal` returns; `shred` drops the key, after which
 * every copy of the sealed values in the log (and its replays) is unreadable.
 * Adapter: infra/personal-data/vault.ts. Keys are themselves sealed with the service's ENCRYPTION_KEY.
 */
export interface PersonalDataVault {
  /** Encrypts `plaintext` under the subject's key (created on first use). Fails once the subject was shredded. */
  seal(subjectId: string, plaintext: string): Promise<string>;
  /** The plaintext, or null when the subject's key was shredded (or never existed). */
  open(subjectId: string, sealed: string): Promise<string | null>;
  /**
   * Files of the subject (a careers CV): AES-256-GCM under the same key, bound to `aad` (the
   * application id), so shredding the key shreds every stored copy of the file too (backups,
   * versioned buckets). Fails like `seal` once the subject was shredded.
   */
  sealBytes(subjectId: string, plaintext: Uint8Array, aad: string): Promise<Uint8Array>;
  /** The file's bytes, or null when the key was shredded; throws when the bytes are not a sealed file or were altered. */
  openBytes(subjectId: string, sealed: Uint8Array, aad: string): Promise<Uint8Array | null>;
  /** Drops the subject's key for good; idempotent. */
  shred(subjectId: string): Promise<void>;
  /**
   * A keyed hash (HMAC-SHA256 under a service key, hex) for looking a value up without keeping it:
   * the same input gives the same digest; it cannot be reversed without the service key.
   */
  blindIndex(value: string): string;
}
