import { SocialConfigurationError } from '../../../ports/social.js';

export { SocialConfigurationError, SocialExchangeError } from '../../../ports/social.js';
export type { ProviderName, SavedAttempt, SocialIdentity, SocialProvider, SocialProviders, StartedAttempt } from '../../../ports/social.js';

/**
 * Turns whatever openid-client or fetch threw into a short, storable reason code: the OAuth
 * `error` when the server sent one (GitHub sends it with HTTP 200, which openid-client reports as
 * an invalid response carrying the body), else the library's error code, else the error's name.
 */
export function reasonOf(err: unknown): string {
  const oauthError = findOAuthError(err, 3);
  const e = err as { code?: unknown; name?: unknown };
  const raw = oauthError ?? (typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'unknown');
  return raw.replace(/[^A-Za-z0-9_.:-]/g, '').slice(0, 80) || 'unknown';
}

function findOAuthError(value: unknown, depth: number): string | null {
  if (!value || typeof value !== 'object' || depth < 0) return null;
  const v = value as { error?: unknown; body?: { error?: unknown }; cause?: unknown };
  if (typeof v.error === 'string') return v.error;
  if (typeof v.body?.error === 'string') return v.body.error;
  return findOAuthError(v.cause, depth - 1);
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * Plain http is accepted only for loopback endpoints (a local test provider): anywhere else the
 * client secret and codes would cross the network in clear.
 */
export function insecureAllowed(urls: string[]): boolean {
  const parsed = urls.map((u) => new URL(u));
  if (parsed.every((u) => u.protocol === 'https:')) return false;
  const bad = parsed.find((u) => u.protocol !== 'https:' && !LOOPBACK.has(u.hostname));
  if (bad) throw new SocialConfigurationError(`${bad.origin} must use https (plain http is accepted for loopback only)`);
  return true;
}

/** Outbound calls to providers give up after this long. */
export const PROVIDER_TIMEOUT_SECONDS = 10;
