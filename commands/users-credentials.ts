/**
 * How bearer credentials are made and checked, in one place for every context that issues them
 * (passwords, API keys, CLI tokens, reset and invitation secrets, trigger keys): random secrets,
 * SHA-256 for high-entropy secrets, scrypt for passwords, comparisons in constant time.
 */
import { randomBytes, scrypt as scryptCb } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

/** A random secret for keys, tokens and codes: 32 bytes, base64url. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

import { constantTimeEqual, sha256 } from '../lib/digest.js';

export { constantTimeEqual, sha256 };

const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** `scrypt$N$r$p$salt$hash`, so the cost can rise later without breaking stored hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const derived = await scrypt(password, Buffer.from(salt, 'base64url'), 32, { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem });
  return constantTimeEqual(derived.toString('base64url'), hash);
}

/** A hash to compare against when the account does not exist, so both paths cost the same. */
// Module scope is safe: a hash of a random secret nobody knows, equally good for every service; no per-service data.
let dummyHash: Promise<string> | null = null;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(randomSecret());
  return dummyHash;
}

/** What a read answers instead of a secret: enough to recognise it, not to use it. */
export function mask(secret: string): string {
  if (secret.length <= 8) return '••••';
  return `${secret.slice(0, 4)}••••${secret.slice(-4)}`;
}
