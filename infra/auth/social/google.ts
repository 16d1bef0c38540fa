import * as oidc from 'openid-client';
import { insecureAllowed, PROVIDER_TIMEOUT_SECONDS, reasonOf, SocialExchangeError, type SavedAttempt, type SocialIdentity, type SocialProvider, type StartedAttempt } from './provider.js';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/**
 * Google, or any OpenID Connect provider found by discovery from its issuer: authorization code
 * with PKCE (S256), state and nonce; openid-client checks the ID token (signature, issuer,
 * audience, expiry, nonce) and the RFC 9207 `iss` response parameter when the provider sends it.
 */
export class GoogleProvider implements SocialProvider {
  readonly name = 'google' as const;
  private discovered: Promise<oidc.Configuration> | null = null;

  constructor(private readonly settings: OidcSettings) {}

  /** Discovery once per process; a failure is not cached, so the next attempt tries again. */
  private configuration(): Promise<oidc.Configuration> {
    if (!this.discovered) {
      const insecure = insecureAllowed([this.settings.issuer]);
      this.discovered = oidc
        .discovery(new URL(this.settings.issuer), this.settings.clientId, this.settings.clientSecret, undefined, {
          execute: insecure ? [oidc.allowInsecureRequests] : [],
          timeout: PROVIDER_TIMEOUT_SECONDS,
        })
        .catch((err: unknown) => {
          this.discovered = null;
          throw err;
        });
    }
    return this.discovered;
  }

  async start(redirectUri: string): Promise<StartedAttempt> {
    const config = await this.configuration();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, state, codeVerifier, nonce };
  }

  async complete(callbackParams: URLSearchParams, saved: SavedAttempt): Promise<SocialIdentity> {
    let claims: Record<string, unknown>;
    try {
      const config = await this.configuration();
      // The token request's redirect_uri is this URL without its query: the one we sent at start.
      const currentUrl = new URL(saved.redirectUri);
      currentUrl.search = callbackParams.toString();
      const tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: saved.codeVerifier,
        expectedState: saved.state,
        expectedNonce: saved.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims();
      if (!idToken) throw new SocialExchangeError('NO_ID_TOKEN', 'the provider returned no ID token');
      claims = { ...idToken };
      // Providers that keep profile claims out of the ID token (the spec's default) serve them at userinfo.
      if (typeof claims.email !== 'string' && config.serverMetadata().userinfo_endpoint) {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub);
        // fetchUserInfo has checked that its `sub` is the ID token's.
        claims = { ...idToken, ...info };
      }
    } catch (err) {
      if (err instanceof SocialExchangeError) throw err;
      throw new SocialExchangeError(reasonOf(err), 'the code exchange with the provider failed', { cause: err });
    }
    return {
      subject: String(claims.sub),
      email: typeof claims.email === 'string' ? claims.email : null,
      // Some providers have sent the string "true".
      emailVerified: claims.email_verified === true || claims.email_verified === 'true',
      name: typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim() : null,
      avatarUrl: typeof claims.picture === 'string' ? claims.picture : null,
    };
  }
}

