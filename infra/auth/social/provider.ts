import type { SocialProvider as ProviderName } from '../../../domain/users/fields.js';

export type { ProviderName };

/** What a provider tells us about the person who signed in. */
export interface SocialIdentity {
  /** The provider's stable id for the account (OIDC `sub`, GitHub's numeric user id). */
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  avatarUrl: string | null;
}

/** What `start` produced and the callback needs back; kept server-side (sealed in the sign-in stream). */
export interface SavedAttempt {
  state: string;
  codeVerifier: string;
  nonce?: string;
  redirectUri: string;
}

export interface StartedAttempt {
  url: string;
  state: string;
  codeVerifier: string;
  nonce?: string;
}

/**
 * One sign-in provider. `start` builds the authorization URL with a fresh state and PKCE verifier
 * (and nonce for OpenID Connect); `complete` exchanges the code from the callback and returns the
 * identity, or throws `SocialExchangeError`.
 */
export interface SocialProvider {
  readonly name: ProviderName;
  start(redirectUri: string): Promise<StartedAttempt>;
  complete(callbackParams: URLSearchParams, saved: SavedAttempt): Promise<SocialIdentity>;
}

/**
 * The code exchange or the identity lookup failed. `reason` is a short machine code safe to store
 * and return (never a token, never a provider's free text).
 */
export class SocialExchangeError extends Error {
  constructor(
    readonly reason: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SocialExchangeError';
  }
}

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

export class SocialConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SocialConfigurationError';
  }
}

/** Outbound calls to providers give up after this long. */
export const PROVIDER_TIMEOUT_SECONDS = 10;
