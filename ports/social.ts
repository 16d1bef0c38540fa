import type { SocialProvider as ProviderName } from '../domain/users/fields.js';

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

/** A provider's configuration cannot be used (for example plain http to a non-loopback host). */
export class SocialConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SocialConfigurationError';
  }
}

/**
 * The configured sign-in providers (adapter: `infra/auth/social/`). Null when the provider has no
 * client id and secret; throws SocialConfigurationError when its configuration cannot be used.
 */
export interface SocialProviders {
  provider(name: ProviderName): SocialProvider | null;
}
