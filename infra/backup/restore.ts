import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Progress } from './backup.js';
import { BackupError, MANIFEST_FILE, sha256Of, type BackupManifest } from './manifest.js';

/**
 * Restores a backup into an empty DATA_DIR (a new machine, or a folder the operator emptied):
 * every file is checked against the manifest's SHA-256 and each database with SQLite's
 * integrity check before anything is written, then copied aside and renamed into place, so an
 * interrupted restore leaves no half-restored DATA_DIR behind. The service then starts on it and
 * rebuilds its read models from the restored log.
 */
export async function restoreDataDir(source: string, dataDir: string, progress: Progress = () => undefined): Promise<BackupManifest> {
  const manifest = await readManifest(source);
  if (existsSync(dataDir) && (await readdir(dataDir)).length > 0) {
    throw new BackupError('DATA_DIR_NOT_EMPTY', `${dataDir} is not empty: restore into an empty DATA_DIR (stop the service and move the old one aside)`);
  }
  for (const file of manifest.files) {
    const path = join(source, file.path);
    if (!existsSync(path) || (await sha256Of(path)) !== file.sha256) throw new BackupError('BACKUP_CORRUPT', `${file.path} is missing or differs from the manifest`);
    if (file.path.endsWith('.db')) checkIntegrity(path, file.path);
  }
  progress(`checked ${manifest.files.length} files against ${MANIFEST_FILE}`);
  const staging = `${dataDir.replace(/\/+$/, '')}.restoring-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  for (const file of manifest.files) {
    const to = join(staging, file.path);
    await mkdir(dirname(to), { recursive: true, mode: 0o700 });
    await copyFile(join(source, file.path), to);
  }
  if (existsSync(dataDir)) await rm(dataDir, { recursive: true });
  await mkdir(dirname(dataDir), { recursive: true });
  await rename(staging, dataDir);
  progress(`restored log position ${manifest.logPosition} (${manifest.events} events) into ${dataDir}`);
  return manifest;
}

async function readManifest(source: string): Promise<BackupManifest> {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(join(source, MANIFEST_FILE), 'utf8')) as BackupManifest;
  } catch {
    throw new BackupError('NOT_A_BACKUP', `${source} has no readable ${MANIFEST_FILE}`);
  }
  if (manifest.format !== 'flowsvc-backup/1' || !Array.isArray(manifest.files)) throw new BackupError('NOT_A_BACKUP', `${source}/${MANIFEST_FILE} is not a backup manifest of this service`);
  if (!manifest.files.some((f) => f.path === 'events.db')) throw new BackupError('BACKUP_CORRUPT', `${source} holds no events.db`);
  return manifest;
}

function checkIntegrity(file: string, name: string): void {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const result = db.pragma('integrity_check', { simple: true });
    if (result !== 'ok') throw new BackupError('BACKUP_CORRUPT', `${name}: integrity check answered ${String(result)}`);
  } finally {
    db.close();
  }
}
