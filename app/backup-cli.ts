import { resolve } from 'node:path';
import { backupDataDir } from '../infra/backup/backup.js';
import { BackupError } from '../infra/backup/manifest.js';
import { restoreDataDir } from '../infra/backup/restore.js';

/**
 * `npm run backup -- <folder>` / `npm run restore -- <folder>`: the embedded DATA_DIR (env
 * DATA_DIR, default ./data) backed up while the service runs, or restored into an empty one.
 * Exit codes: 0 done, 2 usage or a refusal with its code (DATA_DIR_NOT_EMPTY, …), 1 anything else.
 */
async function main(): Promise<number> {
  const [command, folder] = process.argv.slice(2);
  const dataDir = resolve(process.env.DATA_DIR || './data');
  const say = (line: string) => process.stdout.write(`${line}\n`);
  if ((command !== 'backup' && command !== 'restore') || !folder) {
    process.stderr.write('usage: backup-cli backup <new folder> | restore <backup folder>   (DATA_DIR from the environment, default ./data)\n');
    return 2;
  }
  try {
    if (command === 'backup') {
      const m = await backupDataDir(dataDir, resolve(folder), say);
      say(JSON.stringify({ backup: resolve(folder), logPosition: m.logPosition, events: m.events, files: m.files.length }));
    } else {
      const m = await restoreDataDir(resolve(folder), dataDir, say);
      say(JSON.stringify({ restored: dataDir, logPosition: m.logPosition, events: m.events, files: m.files.length }));
    }
    return 0;
  } catch (err) {
    if (err instanceof BackupError) {
      process.stderr.write(`${err.code}: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}

process.exitCode = await main();
