import { expect } from 'chai';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { waitUntil } from '../support/wait.js';

/**
 * Issue 30 item 4: an online backup of the embedded DATA_DIR taken while clients keep writing,
 * restored on a "new machine" (an empty DATA_DIR): every write acknowledged before the backup
 * began is there, the log is exactly the source's prefix up to the backup's position, the keys
 * came along (a token issued before still works), and the restored service takes new writes.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function backupCli(dataDir: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'app', 'backup-cli.ts'), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

const eventsOf = (file: string, upTo: number) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT position, id, stream_id, revision, type FROM events WHERE position <= ? ORDER BY position').all(upTo) as Array<{ position: number; id: string }>;
  } finally {
    db.close();
  }
};

describe('backup and restore of the embedded data (online, under load)', function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  const services: ServiceProcess[] = [];
  const tempDir = (label: string) => {
    const dir = mkdtempSync(join(tmpdir(), `flowsvc-${label}-`));
    dirs.push(dir);
    return dir;
  };
  after(async () => {
    for (const s of services) {
      s.child.kill('SIGKILL');
      await s.exited;
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every write acknowledged before the backup began, the log prefix and the keys; the restored service writes on', async () => {
    const source = tempDir('source');
    const env = { DATA_DIR: source, LOG_LEVEL: 'silent', PORT: '0', RATE_LIMIT_AUTH_PER_MINUTE: '1000' };
    const original = await startServiceProcess(env);
    services.push(original);
    const user = await registerUser(original.baseUrl);

    // Four clients create flows until told to stop; each acknowledgement is timed.
    const acked: Array<{ id: string; at: number }> = [];
    let writing = true;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        const res = await call(original.baseUrl, 'POST', '/flows', { name: `w${w}-${i}` }, user.auth);
        expect(res.status, res.text).to.equal(201);
        acked.push({ id: res.body.flow.id, at: performance.now() });
      }
    });
    await waitUntil('more than 10 writes acknowledged before the backup', () => acked.length > 10, 30_000);
    const backupDir = join(tempDir('backup'), 'b1');
    const backupStarted = performance.now();
    const backup = await backupCli(source, 'backup', backupDir);
    const backupEnded = performance.now();
    expect(backup.code, backup.stderr).to.equal(0);
    const ackedBefore = acked.filter((a) => a.at < backupStarted).map((a) => a.id);
    await waitUntil('a write acknowledged after the backup ended', () => acked.some((a) => a.at > backupEnded), 30_000);
    writing = false;
    await Promise.all(writers);
    const ackedAfter = acked.length - ackedBefore.length;
    expect(ackedBefore.length, 'writes acknowledged before the backup').to.be.greaterThan(10);
    expect(ackedAfter, 'writes went on during and after the backup').to.be.greaterThan(0);
    const manifest = JSON.parse(readFileSync(join(backupDir, 'backup.json'), 'utf8'));
    expect(backup.stdout).to.match(/backup complete/);

    // A backup folder is never overwritten.
    const again = await backupCli(source, 'backup', backupDir);
    expect(again.code).to.equal(2);
    expect(again.stderr).to.match(/^TARGET_NOT_EMPTY/);

    original.child.kill('SIGTERM');
    await original.exited;
    services.splice(services.indexOf(original), 1);

    // The log of the backup is the source's log cut at the backup's position, event for event.
    const restoredDir = join(tempDir('restored'), 'data');
    const restore = await backupCli(restoredDir, 'restore', backupDir);
    expect(restore.code, restore.stderr).to.equal(0);
    const sourceEvents = eventsOf(join(source, 'events.db'), manifest.logPosition);
    expect(sourceEvents.length).to.equal(manifest.events);
    expect(eventsOf(join(restoredDir, 'events.db'), Number.MAX_SAFE_INTEGER)).to.deep.equal(sourceEvents);

    // Refusals: a DATA_DIR in use, a folder that is not a backup, a backup altered after the fact.
    const refused = await backupCli(restoredDir, 'restore', backupDir);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(/^DATA_DIR_NOT_EMPTY/);
    const notABackup = await backupCli(join(tempDir('empty'), 'data'), 'restore', tempDir('nothing'));
    expect(notABackup.stderr).to.match(/^NOT_A_BACKUP/);
    const tampered = join(backupDir, 'keys', 'jwt.key');
    writeFileSync(tampered, `${readFileSync(tampered, 'utf8')}x`);
    const corrupt = await backupCli(join(tempDir('corrupt'), 'data'), 'restore', backupDir);
    expect(corrupt.code).to.equal(2);
    expect(corrupt.stderr).to.match(/^BACKUP_CORRUPT: keys\/jwt.key/);

    // The new machine: the token issued before the backup still works (same keys), every write
    // acknowledged before the backup began is there, and new writes follow the restored log.
    const restored = await startServiceProcess({ ...env, DATA_DIR: restoredDir });
    services.push(restored);
    for (const id of ackedBefore) {
      const res = await call(restored.baseUrl, 'GET', `/flows/${id}`, undefined, user.auth);
      expect(res.status, `flow ${id} acknowledged before the backup`).to.equal(200);
    }
    const created = await call(restored.baseUrl, 'POST', '/flows', { name: 'after the restore' }, user.auth);
    expect(created.status, created.text).to.equal(201);
    const head = eventsOf(join(restoredDir, 'events.db'), Number.MAX_SAFE_INTEGER).at(-1)!;
    expect(head.position).to.be.greaterThan(manifest.logPosition);
    console.log(`      ${ackedBefore.length} flows acknowledged before the backup, ${ackedAfter} during and after; backup at log position ${manifest.logPosition} (${manifest.events} events, ${manifest.files.length} files)`);
  });
});
