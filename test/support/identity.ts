import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { call } from './http.js';

export interface RegisteredUser {
  user: { id: string; email: string; name: string; createdAt: string };
  token: string;
  email: string;
  password: string;
  /** Ready to pass as `headers` to `call`. */
  auth: { Authorization: string };
}

/** A fresh account over HTTP (random unique email unless given); fails loudly when registration does not answer 201. */
export async function registerUser(
  baseUrl: string,
  overrides: { email?: string; password?: string; name?: string } = {},
): Promise<RegisteredUser> {
  const suffix = randomBytes(6).toString('hex');
  const email = overrides.email ?? `user-${suffix}@example.test`;
  const password = overrides.password ?? `pw-${randomBytes(12).toString('hex')}`;
  const name = overrides.name ?? `User ${suffix}`;
  const res = await call(baseUrl, 'POST', '/auth/register', { email, password, name });
  if (res.status !== 201) throw new Error(`registerUser(${email}) answered ${res.status}: ${res.text}`);
  return { user: res.body.user, token: res.body.token, email, password, auth: { Authorization: `Bearer ${res.body.token}` } };
}

/** Logs in over HTTP; returns the raw answer so tests can check failures too. */
export async function login(baseUrl: string, email: string, password: string) {
  const res = await call(baseUrl, 'POST', '/auth/login', { email, password });
  return {
    status: res.status,
    body: res.body,
    token: res.status === 200 ? (res.body.token as string) : null,
    auth: res.status === 200 ? { Authorization: `Bearer ${res.body.token as string}` } : null,
  };
}

/**
 * Like `call`, but from another loopback source address (127.0.0.2, 127.0.0.3, …), so tests can
 * exercise per-IP rate limits without exhausting the one 127.0.0.1 shares with everything else.
 */
export function callFrom(localAddress: string, baseUrl: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const url = new URL(`${baseUrl}${path}`);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: any; text: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress,
        headers: { ...headers, ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: json, text });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** The mails the embedded outbox mailer wrote for `to` (DATA_DIR/outbox/mail.jsonl), oldest first. */
export function mailsTo(dataDir: string, to: string): Array<{ at: string; to: string; subject: string; text: string }> {
  const file = join(dataDir, 'outbox', 'mail.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((mail) => mail.to === to);
}

/** Headers carrying a new API key of `user` limited to `view_resources` (for 403 checks on writes). */
export async function viewOnlyKey(baseUrl: string, user: RegisteredUser): Promise<Record<string, string>> {
  const key = await call(baseUrl, 'POST', '/api-keys', { name: 'read only', scopes: ['view_resources'] }, user.auth);
  if (key.status !== 201) throw new Error(`creating a view-only API key failed: ${key.status} ${key.text}`);
  return { Authorization: `Bearer ${key.body.key}` };
}

/** The token of the newest email verification mail to `to`, or null when none was sent. */
export function verificationTokenFor(dataDir: string, to: string): string | null {
  const mails = mailsTo(dataDir, to).filter((mail) => mail.subject === 'Verify your email address');
  const match = mails.length > 0 ? /verify-email\?token=(\S+)/.exec(mails[mails.length - 1].text) : null;
  return match ? decodeURIComponent(match[1]) : null;
}

/** Proves the account's email as its owner would: the token from the newest verification mail, posted back. */
/** `password`: the account's own, which verifying an account that has one requires (pre-hijacking defence). */
export async function verifyEmailOf(baseUrl: string, dataDir: string, email: string, password: string): Promise<void> {
  const token = verificationTokenFor(dataDir, email);
  if (!token) throw new Error(`no verification mail to ${email}`);
  const res = await call(baseUrl, 'POST', '/auth/verify-email', { token, password });
  if (res.status !== 200) throw new Error(`verifying ${email} answered ${res.status}: ${res.text}`);
}
