import Database from 'better-sqlite3';
import { copyFile, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { BackupError, MANIFEST_FILE, sha256Of, type BackupManifest } from './manifest.js';

/** SQLite files of DATA_DIR: the log (with the bus checkpoints), and the state next to an EventStoreDB log. */
export const DATABASES = ['events.db', 'state.db'];
/** Plain files and folders copied as they are; `objects/tmp/` holds uploads still being written. */
const COPIED = ['keys', 'objects', 'outbox'];
const UPLOADS_IN_PROGRESS = 'objects/tmp/';

export type Progress = (line: string) => void;

/**
 * Online backup of an embedded DATA_DIR while the service keeps writing. Each database is copied
 * with `VACUUM INTO`, one read transaction: a consistent snapshot of the log and of the bus
 * checkpoints at one position, which WAL mode lets writers go on beside. Files (keys, uploaded
 * objects, the mail outbox) are copied before and after the snapshots: an object is written
 * before the event that refers to it, so the second pass has every object the snapshot names,
 * and the first has those deleted while the snapshot was taken.
 */
export async function backupDataDir(dataDir: string, target: string, progress: Progress = () => undefined): Promise<BackupManifest> {
  if (!existsSync(join(dataDir, 'events.db'))) throw new BackupError('NO_EVENT_LOG', `${dataDir} has no events.db: nothing to back up`);
  if (existsSync(target) && (await readdir(target)).length > 0) throw new BackupError('TARGET_NOT_EMPTY', `${target} is not empty; back up into a new folder`);
  await mkdir(target, { recursive: true });
  const started = Date.now();
  await copyFiles(dataDir, target, progress);
  let logPosition = 0;
  let events = 0;
  for (const name of DATABASES) {
    const source = join(dataDir, name);
    if (!existsSync(source)) continue;
    const db = new Database(source, { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 10000');
      db.exec(`VACUUM INTO '${join(target, name).replaceAll("'", "''")}'`);
    } finally {
      db.close();
    }
    if (name === 'events.db') ({ logPosition, events } = logHead(join(target, name)));
    progress(`${name}: snapshot at log position ${logPosition} (${events} events), ${(await stat(join(target, name))).size} bytes`);
  }
  await copyFiles(dataDir, target, progress);
  const files = [];
  for (const path of await listFiles(target)) {
    const full = join(target, path);
    files.push({ path, bytes: (await stat(full)).size, sha256: await sha256Of(full) });
  }
  const manifest: BackupManifest = { format: 'flowsvc-backup/1', createdAt: new Date(started).toISOString(), logPosition, events, files };
  await writeFile(join(target, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  progress(`backup complete: ${files.length} files, ${files.reduce((s, f) => s + f.bytes, 0)} bytes in ${Date.now() - started} ms`);
  return manifest;
}

/** The newest position and the number of events of a snapshot (the log table of infra/event-store/sqlite.ts). */
export function logHead(file: string): { logPosition: number; events: number } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT COALESCE(MAX(position), 0) AS head, COUNT(*) AS n FROM events').get() as { head: number; n: number };
    return { logPosition: row.head, events: row.n };
  } finally {
    db.close();
  }
}

async function copyFiles(dataDir: string, target: string, progress: Progress): Promise<void> {
  let copied = 0;
  for (const folder of COPIED) {
    const root = join(dataDir, folder);
    if (!existsSync(root)) continue;
    for (const path of await listFiles(root)) {
      const rel = join(folder, path);
      if (rel.startsWith(UPLOADS_IN_PROGRESS)) continue;
      const to = join(target, rel);
      if (existsSync(to)) continue;
      await mkdir(dirname(to), { recursive: true, mode: 0o700 });
      // A file deleted between listing and copying is gone from the service too.
      await copyFile(join(root, path), to).then(() => copied++, (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    }
  }
  if (copied) progress(`copied ${copied} files (keys, objects, outbox)`);
}

/** Relative paths of every file under `root`. */
export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(relative(root, join(entry.parentPath, entry.name)));
  }
  return out.sort();
}
