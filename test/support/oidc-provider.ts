import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type InteractionResults } from 'oidc-provider';

export interface OidcAccount {
  sub: string;
  email: string;
  emailVerified: boolean;
  name: string;
  picture?: string;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registers our client; called once the service's port (hence its callback URL) is known. */
  register(redirectUris: string[]): Promise<void>;
  /** The account the next login interaction signs in (the provider's "user typing a password"). */
  nextLogin: OidcAccount;
  /** When set, the next interaction refuses (error=access_denied back to the client). */
  denyNext: boolean;
  stop(): Promise<void>;
}

/**
 * A real OpenID provider (panva's `oidc-provider`, the certified implementation) on loopback.
 * Its login and consent pages are replaced by an interaction handler that approves at once as
 * `nextLogin`, so a test drives the whole authorization code flow by following redirects.
 */
export async function startOidcProvider(): Promise<TestOidcProvider> {
  let provider: Provider | null = null;
  const accounts = new Map<string, OidcAccount>();
  const server: Server = createServer((req, res) => {
    if (!provider) {
      res.writeHead(503).end('not registered yet');
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      interact(provider, req, res).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`interaction failed: ${err.message}`);
      });
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  const self: TestOidcProvider = {
    issuer,
    clientId: `client-${randomBytes(4).toString('hex')}`,
    clientSecret: randomBytes(24).toString('base64url'),
    nextLogin: { sub: 'acct-1', email: 'someone@example.test', emailVerified: true, name: 'Some One' },
    denyNext: false,
    async register(redirectUris) {
      const { privateKey } = await generateKeyPair('RS256', { extractable: true });
      provider = new Provider(issuer, {
        clients: [
          {
            client_id: self.clientId,
            client_secret: self.clientSecret,
            redirect_uris: redirectUris,
            response_types: ['code'],
            grant_types: ['authorization_code'],
            // openid-client's default client authentication.
            token_endpoint_auth_method: 'client_secret_post',
          },
        ],
        jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test' }] },
        cookies: { keys: [randomBytes(16).toString('hex')] },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
        features: { devInteractions: { enabled: false } },
        pkce: { required: () => true },
        // Explicit lifetimes (the defaults print a notice each).
        ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
        async findAccount(_ctx, sub) {
          const account = accounts.get(sub);
          if (!account) return undefined;
          return {
            accountId: sub,
            async claims() {
              return { sub, email: account.email, email_verified: account.emailVerified, name: account.name, picture: account.picture };
            },
          };
        },
      });
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  async function interact(p: Provider, req: IncomingMessage, res: ServerResponse) {
    const details = await p.interactionDetails(req, res);
    let result: InteractionResults;
    if (self.denyNext) {
      self.denyNext = false;
      result = { error: 'access_denied', error_description: 'the user refused' };
    } else if (details.prompt.name === 'login') {
      accounts.set(self.nextLogin.sub, { ...self.nextLogin });
      result = { login: { accountId: self.nextLogin.sub } };
    } else {
      // Consent: grant what the client asked for.
      const grant = details.grantId
        ? (await p.Grant.find(details.grantId))!
        : new p.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
      const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      result = { consent: { grantId: await grant.save() } };
    }
    await p.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
  }

  return self;
}

/**
 * Follows redirects like a browser (cookies per origin: the provider keeps its interaction in
 * cookies) and stops before `stopAt`, returning that URL: how a test walks through login and consent.
 */
export class Browser {
  private readonly jars = new Map<string, Map<string, string>>();

  async get(url: string) {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1).trim()];
      const expired = attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === '';
      if (expired) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }

  async followUntil(url: string, stopAt: string): Promise<string> {
    let next = url;
    for (let hop = 0; hop < 15; hop++) {
      if (next.startsWith(stopAt)) return next;
      const res = await this.get(next);
      const location = res.headers.get('location');
      if (!location || res.status < 300 || res.status >= 400) throw new Error(`${next} answered ${res.status}: ${await res.text()}`);
      next = new URL(location, next).href;
    }
    throw new Error(`too many redirects from ${url}`);
  }
}
