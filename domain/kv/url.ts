import { DomainError } from '../shared/decider.js';

/**
 * A key-value store URL as users give it: `redis://[user][:password]@host[:port][/db]` or
 * `rediss://…` (TLS). Parsed once here so every operation names the same field in its errors and
 * masks the password the same way; the password never appears in an answer or a log line.
 */
export interface RedisTarget {
  /** Host name or IP as written (IPv6 without brackets). */
  host: string;
  port: number;
  tls: boolean;
  db: number;
  username?: string;
  password?: string;
  /** The URL with the password replaced by `****`. */
  masked: string;
}

export const KV_URL_MAX_LENGTH = 2048;
export const DEFAULT_REDIS_PORT = 6379;

const invalid = (message: string, field: string) => new DomainError('KV_INVALID_URL', message, 'invalid', { field });

/** Masks the password of any redis(s) URL, parsable or not (for messages quoting user input). */
export function maskRedisUrl(raw: string): string {
  return raw.replace(/^(rediss?:\/\/)([^/@]*)@/i, (_m, scheme: string, auth: string) => {
    const colon = auth.indexOf(':');
    return colon === -1 ? `${scheme}****@` : `${scheme}${auth.slice(0, colon)}:****@`;
  });
}

export function parseRedisUrl(raw: string, field = 'body.url'): RedisTarget {
  if (typeof raw !== 'string' || raw.trim() === '') throw invalid('a redis:// or rediss:// URL is required', field);
  if (raw.length > KV_URL_MAX_LENGTH) throw invalid(`the URL is longer than ${KV_URL_MAX_LENGTH} characters`, field);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid('not a valid URL (expected redis://[user][:password]@host[:port][/db])', field);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw invalid(`the scheme must be redis:// or rediss://, not ${url.protocol}//`, field);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw invalid('the URL has no host', field);
  const port = url.port ? Number(url.port) : DEFAULT_REDIS_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid('the port must be between 1 and 65535', field);
  const path = url.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d{1,5}$/.test(path)) throw invalid('the path must be a database number (/0, /1, …)', field);
  if (url.hash) throw invalid('the URL must not have a fragment', field);
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw invalid('the user or password is not correctly percent-encoded', field);
    }
  };
  const username = url.username ? decode(url.username) : undefined;
  const password = url.password ? decode(url.password) : undefined;
  return { host, port, tls: url.protocol === 'rediss:', db: path === '' ? 0 : Number(path), username, password, masked: maskRedisUrl(raw.trim()) };
}
