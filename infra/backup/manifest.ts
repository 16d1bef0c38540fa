import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** What `backup.json` records: enough to check a backup before restoring it. */
export interface BackupManifest {
  format: 'flowsvc-backup/1';
  createdAt: string;
  /** Position of the newest event in the backed-up log: every write acknowledged before the backup began is at or below it. */
  logPosition: number;
  events: number;
  files: Array<{ path: string; bytes: number; sha256: string }>;
}

export const MANIFEST_FILE = 'backup.json';

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A backup or restore that cannot proceed, with a stable code for scripts. */
export class BackupError extends Error {
  constructor(
    readonly code: 'DATA_DIR_NOT_EMPTY' | 'NO_EVENT_LOG' | 'NOT_A_BACKUP' | 'BACKUP_CORRUPT' | 'TARGET_NOT_EMPTY',
    message: string,
  ) {
    super(message);
    this.name = 'BackupError';
  }
}
