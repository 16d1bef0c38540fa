import * as oidc from 'openid-client';
import { insecureAllowed, PROVIDER_TIMEOUT_SECONDS, reasonOf, SocialExchangeError, type SavedAttempt, type SocialIdentity, type SocialProvider, type StartedAttempt } from './provider.js';

export interface GitHubSettings {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** REST API base: `https://api.github.com`, or `https://<host>/api/v3` for GitHub Enterprise Server. */
  apiUrl: string;
}

interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
  email: string | null;
  avatar_url: string | null;
}

interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/**
 * GitHub is plain OAuth 2.0 (no discovery, no ID token). openid-client still does the OAuth part
 * from a hand-made server metadata (state check, PKCE, client authentication, token response
 * validation, including GitHub's "HTTP 200 with an `error` body"); the identity comes from the
 * REST API with plain fetch, since it is not a standard userinfo endpoint.
 */
export class GitHubProvider implements SocialProvider {
  readonly name = 'github' as const;
  private readonly config: oidc.Configuration;

  constructor(private readonly settings: GitHubSettings) {
    const insecure = insecureAllowed([settings.authorizeUrl, settings.tokenUrl, settings.apiUrl]);
    this.config = new oidc.Configuration(
      {
        // GitHub publishes no issuer; this only names the server for openid-client.
        issuer: new URL(settings.authorizeUrl).origin,
        authorization_endpoint: settings.authorizeUrl,
        token_endpoint: settings.tokenUrl,
      },
      settings.clientId,
      settings.clientSecret,
    );
    this.config.timeout = PROVIDER_TIMEOUT_SECONDS;
    if (insecure) oidc.allowInsecureRequests(this.config);
  }

  async start(redirectUri: string): Promise<StartedAttempt> {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(this.config, {
      redirect_uri: redirectUri,
      scope: 'read:user user:email',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
    });
    return { url: url.href, state, codeVerifier };
  }

  async complete(callbackParams: URLSearchParams, saved: SavedAttempt): Promise<SocialIdentity> {
    try {
      const currentUrl = new URL(saved.redirectUri);
      currentUrl.search = callbackParams.toString();
      const tokens = await oidc.authorizationCodeGrant(this.config, currentUrl, {
        pkceCodeVerifier: saved.codeVerifier,
        expectedState: saved.state,
      });
      const user = await this.api<GitHubUser>('/user', tokens.access_token);
      if (typeof user?.id !== 'number') throw new SocialExchangeError('INVALID_USER', 'GitHub answered /user without an id');
      const { email, verified } = await this.bestEmail(tokens.access_token, user);
      return {
        subject: String(user.id),
        email,
        emailVerified: verified,
        name: user.name?.trim() || user.login || null,
        avatarUrl: user.avatar_url ?? null,
      };
    } catch (err) {
      if (err instanceof SocialExchangeError) throw err;
      throw new SocialExchangeError(reasonOf(err), 'the code exchange with the provider failed', { cause: err });
    }
  }

  /** The primary verified address; else any verified one; else the public one, unverified. */
  private async bestEmail(accessToken: string, user: GitHubUser): Promise<{ email: string | null; verified: boolean }> {
    let emails: GitHubEmail[] = [];
    try {
      emails = await this.api<GitHubEmail[]>('/user/emails', accessToken);
    } catch {
      // Without the user:email scope GitHub answers 403/404: fall back to the public address.
    }
    const list = Array.isArray(emails) ? emails : [];
    const chosen = list.find((e) => e.primary && e.verified) ?? list.find((e) => e.verified);
    if (chosen) return { email: chosen.email, verified: true };
    const primary = list.find((e) => e.primary);
    return { email: primary?.email ?? user.email ?? null, verified: false };
  }

  private async api<T>(path: string, accessToken: string): Promise<T> {
    const res = await fetch(`${this.settings.apiUrl.replace(/\/+$/, '')}${path}`, {
      headers: {
        Accept: 'application/vnd.github+json',
        Authorization: `Bearer ${accessToken}`,
        'X-GitHub-Api-Version': '2022-11-28',
        // GitHub refuses API requests without a User-Agent.
        'User-Agent': 'flowsvc-social-sign-in',
      },
      redirect: 'error',
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_SECONDS * 1000),
    });
    if (!res.ok) throw new SocialExchangeError(`GITHUB_API_${res.status}`, `GitHub answered ${res.status} to ${path}`);
    return (await res.json()) as T;
  }
}
