import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Keys come from configuration; the embedded default generates one on first start and keeps it
 * under DATA_DIR (mode 0600), so tokens and encrypted values survive a restart.
 */
export function loadOrCreateKey(configured: string | undefined, dataDir: string, fileName: string): Buffer {
  if (configured) return decodeKey(configured);
  const file = join(dataDir, 'keys', fileName);
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  const key = randomBytes(32);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Written aside, then linked into place: link fails if another process got there first, and
  // nobody ever reads a half-written key. Processes starting together on one DATA_DIR share one key.
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(aside, key.toString('base64'), { mode: 0o600 });
  try {
    linkSync(aside, file);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  } finally {
    unlinkSync(aside);
  }
}

function decodeKey(value: string): Buffer {
  if (/^[0-9a-f]{64}$/i.test(value)) return Buffer.from(value, 'hex');
  const b64 = Buffer.from(value, 'base64');
  // A JWT secret may be any long passphrase: use its bytes as they are.
  return b64.length === 32 ? b64 : Buffer.from(value, 'utf8');
}
