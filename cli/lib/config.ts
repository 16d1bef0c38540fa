import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError, EXIT } from './errors.js';

/**
 * Where flowctl keeps what it remembers: `$XDG_CONFIG_HOME/flowctl` (default `~/.config/flowctl`).
 * `credentials.json` holds one token per service URL (mode 0600, in a 0700 directory); the URL
 * used last is the default for the next command.
 */
export const DEFAULT_URL = 'http://127.0.0.1:3000/api';

export function configDir(): string {
  const base = process.env.XDG_CONFIG_HOME && process.env.XDG_CONFIG_HOME.trim() !== '' ? process.env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'flowctl');
}

export const credentialsPath = () => join(configDir(), 'credentials.json');

export interface SavedLogin {
  token: string;
  tokenId: string | null;
  userId: string;
  email: string | null;
  savedAt: string;
}

interface CredentialsFile {
  version: 1;
  current: string | null;
  servers: Record<string, SavedLogin>;
}

/**
 * The API base URL: `--url`, else `FLOWCTL_URL`, else the last one used, else the local default.
 * `http://host:3000` and `http://host:3000/api` both mean the API under `/api`.
 */
export function normalizeUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`not a URL: ${raw} (expected e.g. http://127.0.0.1:3000)`, EXIT.USAGE, 'USAGE');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`the URL must be http or https: ${raw}`, EXIT.USAGE, 'USAGE');
  let path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/api')) path = `${path}/api`;
  return `${url.origin}${path}`;
}

export function resolveUrl(flag: string | undefined): string {
  const chosen = flag ?? process.env.FLOWCTL_URL ?? readCredentials().current ?? DEFAULT_URL;
  return normalizeUrl(chosen);
}

export function readCredentials(): CredentialsFile {
  const path = credentialsPath();
  if (!existsSync(path)) return { version: 1, current: null, servers: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<CredentialsFile>;
    return { version: 1, current: parsed.current ?? null, servers: parsed.servers ?? {} };
  } catch {
    throw new CliError(`${path} is not valid JSON; remove it and run flowctl login again`, EXIT.ERROR, 'BAD_CREDENTIALS_FILE');
  }
}

/** Writes a file only its owner can read, atomically (temp file + rename), creating the directory 0700. */
export function writePrivateFile(path: string, content: string): void {
  const dir = configDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  chmodSync(tmp, 0o600); // an existing temp file keeps its mode otherwise
  renameSync(tmp, path);
}

function writeCredentials(file: CredentialsFile): void {
  writePrivateFile(credentialsPath(), `${JSON.stringify(file, null, 2)}\n`);
}

export function saveLogin(url: string, login: SavedLogin): void {
  const file = readCredentials();
  file.servers[url] = login;
  file.current = url;
  writeCredentials(file);
}

export function forgetLogin(url: string): SavedLogin | null {
  const file = readCredentials();
  const saved = file.servers[url] ?? null;
  if (!saved) return null;
  delete file.servers[url];
  if (Object.keys(file.servers).length === 0 && file.current === url) {
    rmSync(credentialsPath(), { force: true });
    return saved;
  }
  writeCredentials(file);
  return saved;
}

/** The token for this URL: `FLOWCTL_TOKEN` when set (CI), else the saved login, else null. */
export function tokenFor(url: string): string | null {
  if (process.env.FLOWCTL_TOKEN && process.env.FLOWCTL_TOKEN.trim() !== '') return process.env.FLOWCTL_TOKEN.trim();
  return readCredentials().servers[url]?.token ?? null;
}

export const savedLoginFor = (url: string): SavedLogin | null => readCredentials().servers[url] ?? null;
