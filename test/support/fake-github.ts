import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface FakeGitHubUser {
  id: number;
  login: string;
  name: string | null;
  /** The public profile email (often null on GitHub). */
  email: string | null;
  avatarUrl: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

export interface FakeGitHub {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** The GitHub account that "approves" the next authorization. */
  nextUser: FakeGitHubUser;
  /** When set, the next authorization redirects back with error=access_denied. */
  denyNext: boolean;
  /** Token requests received, to check what the client sent. */
  tokenRequests: Array<Record<string, string>>;
  /** The service's environment for this fake. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

interface PendingCode {
  redirectUri: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  user: FakeGitHubUser;
}

/**
 * A loopback server speaking the parts of GitHub's OAuth app flow we use: the authorize redirect
 * (approving at once), the token endpoint (form or JSON by Accept, errors as HTTP 200 with an
 * `error` field, single-use codes, PKCE S256), and `GET /user` and `GET /user/emails`.
 */
export async function startFakeGitHub(): Promise<FakeGitHub> {
  const codes = new Map<string, PendingCode>();
  const tokens = new Map<string, FakeGitHubUser>();

  const self: FakeGitHub = {
    baseUrl: '',
    clientId: `Iv1.${randomBytes(8).toString('hex')}`,
    clientSecret: randomBytes(20).toString('hex'),
    nextUser: { id: 1, login: 'octocat', name: 'The Octocat', email: null, avatarUrl: 'https://avatars.example.test/u/1', emails: [] },
    denyNext: false,
    tokenRequests: [],
    env() {
      return {
        GITHUB_CLIENT_ID: self.clientId,
        GITHUB_CLIENT_SECRET: self.clientSecret,
        GITHUB_AUTHORIZE_URL: `${self.baseUrl}/login/oauth/authorize`,
        GITHUB_TOKEN_URL: `${self.baseUrl}/login/oauth/access_token`,
        GITHUB_API_URL: self.baseUrl,
      };
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  function authorize(url: URL, res: ServerResponse) {
    const q = url.searchParams;
    if (q.get('client_id') !== self.clientId) return send(res, 404, 'text/plain', 'unknown client');
    const redirect = new URL(q.get('redirect_uri') ?? '');
    const state = q.get('state');
    if (state) redirect.searchParams.set('state', state);
    if (self.denyNext) {
      self.denyNext = false;
      redirect.searchParams.set('error', 'access_denied');
      redirect.searchParams.set('error_description', 'The user has denied your application access.');
    } else {
      const code = randomBytes(10).toString('hex');
      codes.set(code, {
        redirectUri: redirect.origin + redirect.pathname,
        codeChallenge: q.get('code_challenge'),
        codeChallengeMethod: q.get('code_challenge_method'),
        user: structuredClone(self.nextUser),
      });
      redirect.searchParams.set('code', code);
    }
    res.writeHead(302, { Location: redirect.href }).end();
  }

  function accessToken(params: Record<string, string>, req: IncomingMessage, res: ServerResponse) {
    self.tokenRequests.push(params);
    const fail = (error: string, description: string) => reply(req, res, { error, error_description: description, error_uri: 'https://docs.github.com/apps' });
    if (params.client_id !== self.clientId || params.client_secret !== self.clientSecret) return fail('incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.');
    const pending = codes.get(params.code ?? '');
    codes.delete(params.code ?? '');
    if (!pending) return fail('bad_verification_code', 'The code passed is incorrect or expired.');
    if (params.redirect_uri && params.redirect_uri !== pending.redirectUri) return fail('redirect_uri_mismatch', 'The redirect_uri MUST match the registered callback URL for this application.');
    if (pending.codeChallenge) {
      const computed = createHash('sha256').update(params.code_verifier ?? '').digest('base64url');
      if (pending.codeChallengeMethod !== 'S256' || computed !== pending.codeChallenge) return fail('invalid_grant', 'The code_verifier does not match the code_challenge.');
    }
    const token = `gho_${randomBytes(18).toString('hex')}`;
    tokens.set(token, pending.user);
    reply(req, res, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
  }

  function api(url: URL, req: IncomingMessage, res: ServerResponse) {
    const match = /^(?:token|bearer)\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const user = match ? tokens.get(match[1]) : undefined;
    if (!user) return send(res, 401, 'application/json', JSON.stringify({ message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' }));
    if (url.pathname === '/user') {
      return send(res, 200, 'application/json', JSON.stringify({ id: user.id, login: user.login, name: user.name, email: user.email, avatar_url: user.avatarUrl }));
    }
    const emails = user.emails.map((e) => ({ ...e, visibility: e.primary ? 'private' : null }));
    return send(res, 200, 'application/json', JSON.stringify(emails));
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', self.baseUrl);
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') return authorize(url, res);
    if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) return api(url, req, res);
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (raw += chunk));
      req.on('end', () => {
        const json = (req.headers['content-type'] ?? '').includes('json');
        const params = json ? (JSON.parse(raw || '{}') as Record<string, string>) : Object.fromEntries(new URLSearchParams(raw));
        accessToken(params, req, res);
      });
      return;
    }
    send(res, 404, 'application/json', JSON.stringify({ message: 'Not Found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return self;
}

/** Like GitHub: JSON when the client asks for it, form-encoded otherwise; errors too are HTTP 200. */
function reply(req: IncomingMessage, res: ServerResponse, body: Record<string, string>) {
  if ((req.headers.accept ?? '').includes('application/json')) return send(res, 200, 'application/json', JSON.stringify(body));
  send(res, 200, 'application/x-www-form-urlencoded', new URLSearchParams(body).toString());
}

function send(res: ServerResponse, status: number, type: string, body: string) {
  res.writeHead(status, { 'content-type': type }).end(body);
}
