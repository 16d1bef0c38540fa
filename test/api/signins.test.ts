import { expect } from 'chai';
import { signInIdForState } from '../../commands/signins.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { call } from '../support/http.js';
import { registerUser, login, verifyEmailOf } from '../support/identity.js';
import { Browser, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';

const FRONTEND = 'http://127.0.0.1:5999/app';
let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

async function manual(url: string) {
  const res = await fetch(url, { redirect: 'manual' });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** The fragment the service put on the front end's URL. */
function fragmentOf(location: string) {
  expect(location.startsWith(`${FRONTEND}/auth/callback#`), location).to.equal(true);
  const params = new URLSearchParams(new URL(location).hash.slice(1));
  return { token: params.get('token')!, expiresIn: params.get('expiresIn'), provider: params.get('provider'), isNew: params.get('new') };
}

for (const mode of availableModes()) {
  describe(`social sign-in (${mode})`, function () {
    this.timeout(60_000);
    let idp: TestOidcProvider;
    let gh: FakeGitHub;
    let svc: TestService;
    let origin: string;

    before(async () => {
      idp = await startOidcProvider();
      gh = await startFakeGitHub();
      svc = await startTestService(mode, {
        GOOGLE_ISSUER: idp.issuer,
        GOOGLE_CLIENT_ID: idp.clientId,
        GOOGLE_CLIENT_SECRET: idp.clientSecret,
        ...gh.env(),
        FRONTEND_URL: FRONTEND,
        RATE_LIMIT_AUTH_PER_MINUTE: '1000',
      });
      origin = new URL(svc.baseUrl).origin;
      // The provider must know our callback URL, which exists only now that the service has a port.
      await idp.register([`${origin}/api/auth/google/callback`]);
    });
    after(async () => {
      await svc?.stop();
      await idp?.stop();
      await gh?.stop();
    });

    // Each test starts with fresh, verified accounts at both providers (and no pending refusal).
    beforeEach(() => {
      const id = 100_000 + ++counter;
      idp.nextLogin = { sub: unique('g'), email: `${unique('google')}@example.test`, emailVerified: true, name: 'Grace Hopper' };
      idp.denyNext = false;
      gh.nextUser = {
        id,
        login: `octo${id}`,
        name: null,
        email: null,
        avatarUrl: `https://avatars.example.test/u/${id}`,
        emails: [
          { email: `other-${id}@example.test`, primary: false, verified: true },
          { email: `${unique('octo')}@example.test`, primary: true, verified: true },
        ],
      };
      gh.denyNext = false;
    });

    const callbackPrefix = (provider: string) => `${origin}/api/auth/${provider}/callback`;
    /** `call` follows redirects (fetch's default); these routes must be looked at before that. */
    const get = (base: string, path: string) => manual(`${base}${path}`);

    /** Start at the service, go through the provider; answers the callback URL the provider sent the browser to. */
    async function throughProvider(provider: 'google' | 'github') {
      const started = await get(svc.baseUrl, `/auth/${provider}`);
      expect(started.status, started.text).to.equal(302);
      const location = started.headers.get('location')!;
      const callbackUrl = await new Browser().followUntil(location, callbackPrefix(provider));
      return { authorizeUrl: new URL(location), callbackUrl, state: new URL(callbackUrl).searchParams.get('state')! };
    }

    const hit = (url: string) => fetch(url, { redirect: 'manual' });
    async function hitJson(url: string) {
      const res = await hit(url);
      return { status: res.status, body: (await res.json()) as { success: boolean; error: { code: string; details?: Record<string, unknown> } } };
    }
    const signInEvents = async (state: string) => svc.services.eventStore.readStream(`signin-${signInIdForState(state)}`);

    async function signIn(provider: 'google' | 'github') {
      const { callbackUrl, state } = await throughProvider(provider);
      const res = await hit(callbackUrl);
      expect(res.status, await res.clone().text()).to.equal(302);
      return { ...fragmentOf(res.headers.get('location')!), state, callbackUrl, res };
    }

    const me = (token: string) => call(svc.baseUrl, 'GET', '/users/me', undefined, { Authorization: `Bearer ${token}` });

    describe('Google (OpenID Connect, against a real oidc-provider)', () => {
      it('redirects to the provider with state, PKCE S256, nonce and the OIDC scopes', async () => {
        const res = await get(svc.baseUrl, '/auth/google');
        expect(res.status).to.equal(302);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        const url = new URL(res.headers.get('location')!);
        expect(url.origin).to.equal(idp.issuer);
        const q = url.searchParams;
        expect(q.get('client_id')).to.equal(idp.clientId);
        expect(q.get('response_type')).to.equal('code');
        expect(q.get('scope')).to.equal('openid email profile');
        expect(q.get('redirect_uri')).to.equal(callbackPrefix('google'));
        expect(q.get('code_challenge_method')).to.equal('S256');
        expect(q.get('code_challenge')).to.match(/^[A-Za-z0-9_-]{43}$/);
        expect(q.get('state')).to.match(/^[A-Za-z0-9_-]{43}$/);
        expect(q.get('nonce')).to.match(/^[A-Za-z0-9_-]{43}$/);
        const events = await signInEvents(q.get('state')!);
        expect(events.map((e) => e.type)).to.deep.equal(['SocialSignInStarted']);
        expect(events[0].data).to.include({ provider: 'google', redirectUri: callbackPrefix('google') });
      });

      it('signs a new user in end to end: 302 to the front end with a working token', async () => {
        const result = await signIn('google');
        expect(result.provider).to.equal('google');
        expect(result.isNew).to.equal('true');
        expect(Number(result.expiresIn)).to.be.greaterThan(0);
        expect(result.res.headers.get('referrer-policy')).to.equal('no-referrer');
        const profile = await me(result.token);
        expect(profile.status, profile.text).to.equal(200);
        expect(profile.body.user).to.include({ email: idp.nextLogin.email, name: 'Grace Hopper' });
        const events = await signInEvents(result.state);
        expect(events.map((e) => e.type)).to.deep.equal(['SocialSignInStarted', 'SocialSignInCallbackReceived', 'SocialSignInCompleted']);
        expect(events[2].data).to.include({ userId: profile.body.user.id, created: true });
        expect(events[2].metadata.actorId).to.equal(profile.body.user.id);
      });

      it('signs the same provider account in again as the same user', async () => {
        const first = await signIn('google');
        const second = await signIn('google');
        expect(second.isNew).to.equal('false');
        expect((await me(second.token)).body.user.id).to.equal((await me(first.token)).body.user.id);
      });

      it('links a verified email to the account registered with a password, once that account verified it', async () => {
        const registered = await registerUser(svc.baseUrl);
        await verifyEmailOf(svc.baseUrl, svc.services.config.DATA_DIR, registered.email, registered.password);
        idp.nextLogin = { sub: unique('g'), email: registered.email.toUpperCase(), emailVerified: true, name: 'Someone Else' };
        const result = await signIn('google');
        expect(result.isNew).to.equal('false');
        const profile = await me(result.token);
        expect(profile.body.user.id).to.equal(registered.user.id);
        expect((await login(svc.baseUrl, registered.email, registered.password)).status, 'the password still works').to.equal(200);
      });

      it('refuses an unverified email that belongs to another account: 409 EMAIL_TAKEN, recorded', async () => {
        const registered = await registerUser(svc.baseUrl);
        idp.nextLogin = { sub: unique('g'), email: registered.email, emailVerified: false, name: 'Impostor' };
        const { callbackUrl, state } = await throughProvider('google');
        const res = await hitJson(callbackUrl);
        expect(res.status).to.equal(409);
        expect(res.body.error.code).to.equal('EMAIL_TAKEN');
        const events = await signInEvents(state);
        expect(events.at(-1)!.type).to.equal('SocialSignInFailed');
        expect(events.at(-1)!.data).to.include({ reason: 'EMAIL_TAKEN' });
      });

      it('a provider error (the user refused) → 400 PROVIDER_ERROR, recorded', async () => {
        idp.denyNext = true;
        const { callbackUrl, state } = await throughProvider('google');
        expect(new URL(callbackUrl).searchParams.get('error')).to.equal('access_denied');
        const res = await hitJson(callbackUrl);
        expect(res.status).to.equal(400);
        expect(res.body).to.deep.include({ success: false });
        expect(res.body.error.code).to.equal('PROVIDER_ERROR');
        expect(res.body.error.details).to.deep.equal({ providerError: 'access_denied' });
        const events = await signInEvents(state);
        expect(events.at(-1)!.data).to.include({ reason: 'PROVIDER_ERROR', detail: 'access_denied' });
      });

      it('a code the provider does not know → 400 EXCHANGE_FAILED', async () => {
        const { callbackUrl } = await throughProvider('google');
        const forged = new URL(callbackUrl);
        forged.searchParams.set('code', 'not-a-code-the-provider-issued');
        const res = await hitJson(forged.href);
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('EXCHANGE_FAILED');
      });
    });

    describe('GitHub (OAuth 2.0, against a local fake)', () => {
      it('redirects with state, PKCE S256 and the GitHub scopes, without nonce', async () => {
        const res = await get(svc.baseUrl, '/auth/github');
        expect(res.status).to.equal(302);
        const url = new URL(res.headers.get('location')!);
        expect(url.origin + url.pathname).to.equal(`${gh.baseUrl}/login/oauth/authorize`);
        expect(url.searchParams.get('scope')).to.equal('read:user user:email');
        expect(url.searchParams.get('client_id')).to.equal(gh.clientId);
        expect(url.searchParams.get('code_challenge_method')).to.equal('S256');
        expect(url.searchParams.get('redirect_uri')).to.equal(callbackPrefix('github'));
        expect(url.searchParams.has('nonce')).to.equal(false);
      });

      it('signs in with the primary verified email, then again as the same user', async () => {
        const { id } = gh.nextUser;
        const email = gh.nextUser.emails.find((e) => e.primary)!.email;
        const first = await signIn('github');
        expect(first).to.include({ provider: 'github', isNew: 'true' });
        const profile = await me(first.token);
        expect(profile.body.user).to.include({ email, name: `octo${id}`, avatarUrl: `https://avatars.example.test/u/${id}` });
        const sent = gh.tokenRequests.at(-1)!;
        expect(sent.code_verifier, 'PKCE verifier sent with the code').to.match(/^[A-Za-z0-9_-]{43,128}$/);
        expect(sent.redirect_uri).to.equal(callbackPrefix('github'));

        const second = await signIn('github');
        expect(second.isNew).to.equal('false');
        expect((await me(second.token)).body.user.id).to.equal(profile.body.user.id);
      });

      it('an account with no email address at all → 400 SOCIAL_EMAIL_REQUIRED, recorded', async () => {
        gh.nextUser = { ...gh.nextUser, email: null, emails: [] };
        const { callbackUrl, state } = await throughProvider('github');
        const res = await hitJson(callbackUrl);
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('SOCIAL_EMAIL_REQUIRED');
        expect((await signInEvents(state)).at(-1)!.data).to.include({ reason: 'SOCIAL_EMAIL_REQUIRED' });
      });

      it('a provider error → 400 PROVIDER_ERROR', async () => {
        gh.denyNext = true;
        const { callbackUrl } = await throughProvider('github');
        const res = await hitJson(callbackUrl);
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('PROVIDER_ERROR');
      });

      it('a code GitHub refuses (HTTP 200 with an error body) → 400 EXCHANGE_FAILED naming the reason', async () => {
        const { callbackUrl, state } = await throughProvider('github');
        const forged = new URL(callbackUrl);
        forged.searchParams.set('code', 'deadbeef');
        const res = await hitJson(forged.href);
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('EXCHANGE_FAILED');
        expect(res.body.error.details).to.deep.equal({ reason: 'bad_verification_code' });
        expect((await signInEvents(state)).at(-1)!.data).to.include({ reason: 'EXCHANGE_FAILED', detail: 'bad_verification_code' });
      });
    });

    describe('state handling', () => {
      it('a replayed callback → 400 INVALID_STATE (the state is consumed once)', async () => {
        const first = await signIn('github');
        const again = await hitJson(first.callbackUrl);
        expect(again.status).to.equal(400);
        expect(again.body.error.code).to.equal('INVALID_STATE');
        expect((await signInEvents(first.state)).map((e) => e.type).at(-1), 'the replay changes nothing').to.equal('SocialSignInCompleted');
      });

      it('two callbacks racing with one state: exactly one signs in', async () => {
        const { callbackUrl } = await throughProvider('github');
        const statuses = (await Promise.all([hit(callbackUrl), hit(callbackUrl), hit(callbackUrl)])).map((r) => r.status);
        expect(statuses.sort()).to.deep.equal([302, 400, 400]);
      });

      it('a tampered state → 400 INVALID_STATE, and the genuine attempt still completes', async () => {
        const { callbackUrl, state } = await throughProvider('google');
        const tampered = new URL(callbackUrl);
        tampered.searchParams.set('state', (state[0] === 'A' ? 'B' : 'A') + state.slice(1));
        const res = await hitJson(tampered.href);
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_STATE');
        expect((await hit(callbackUrl)).status).to.equal(302);
      });

      it('a missing or malformed state → 400 INVALID_STATE', async () => {
        for (const query of ['?code=abc', '?code=abc&state=short', '?code=abc&state=' + 'x'.repeat(60)]) {
          const res = await get(svc.baseUrl, `/auth/google/callback${query}`);
          expect(res.status, query).to.equal(400);
          expect(res.body.error.code, query).to.equal('INVALID_STATE');
        }
      });

      it('a missing code → 400 MISSING_CODE, recorded, and the state cannot be used again', async () => {
        const { callbackUrl, state } = await throughProvider('github');
        const withoutCode = new URL(callbackUrl);
        withoutCode.searchParams.delete('code');
        const res = await hitJson(withoutCode.href);
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('MISSING_CODE');
        expect((await signInEvents(state)).at(-1)!.data).to.include({ reason: 'MISSING_CODE' });
        expect((await hitJson(callbackUrl)).body.error.code).to.equal('INVALID_STATE');
      });

      it('a state presented at the other provider\'s callback → 400 INVALID_STATE, recorded', async () => {
        const { callbackUrl, state } = await throughProvider('github');
        const misdirected = new URL(callbackUrl.replace('/auth/github/callback', '/auth/google/callback'));
        const res = await hitJson(misdirected.href);
        expect(res.body.error.code).to.equal('INVALID_STATE');
        expect((await signInEvents(state)).at(-1)!.data).to.include({ reason: 'PROVIDER_MISMATCH' });
      });

      it('an expired attempt → 400 INVALID_STATE, recorded as STATE_EXPIRED', async () => {
        const { callbackUrl, state } = await throughProvider('github');
        const realNow = svc.services.now;
        svc.services.now = () => new Date(Date.now() + 11 * 60_000);
        try {
          const res = await hitJson(callbackUrl);
          expect(res.status).to.equal(400);
          expect(res.body.error.code).to.equal('INVALID_STATE');
        } finally {
          svc.services.now = realNow;
        }
        expect((await signInEvents(state)).at(-1)!.data).to.include({ reason: 'STATE_EXPIRED' });
      });

      it('keeps no state, code verifier, nonce, code or provider token in clear in the log', async () => {
        const result = await signIn('github');
        const sent = gh.tokenRequests.at(-1)!;
        const log = JSON.stringify(await svc.services.eventStore.readAll());
        for (const secret of [result.state, sent.code_verifier, sent.code, sent.client_secret, idp.clientSecret]) {
          expect(log.includes(secret), 'a secret is in the log').to.equal(false);
        }
      });
    });

    it('documents the four operations in the OpenAPI document', async () => {
      const doc = (await call(svc.baseUrl, 'GET', '/openapi.json')).body;
      for (const provider of ['google', 'github']) {
        expect(doc.paths[`/auth/${provider}`].get.responses).to.have.property('302');
        expect(doc.paths[`/auth/${provider}/callback`].get.responses).to.include.keys('302', '400', '404', '409');
      }
    });

    describe('configuration and limits', () => {
      let bare: TestService;
      before(async () => {
        // GitHub left unconfigured; Google configured but its issuer is down (nothing listens on port 9).
        bare = await startTestService(mode, {
          GOOGLE_ISSUER: 'http://127.0.0.1:9',
          GOOGLE_CLIENT_ID: 'id',
          GOOGLE_CLIENT_SECRET: 'secret',
          RATE_LIMIT_AUTH_PER_MINUTE: '2',
        });
      });
      after(async () => bare?.stop());

      it('a provider without client id and secret → 404 PROVIDER_NOT_CONFIGURED on both routes', async () => {
        for (const path of ['/auth/github', `/auth/github/callback?code=a&state=${'A'.repeat(43)}`]) {
          const res = await get(bare.baseUrl, path);
          expect(res.status, path).to.equal(404);
          expect(res.body.error.code).to.equal('PROVIDER_NOT_CONFIGURED');
        }
      });

      it('an unreachable provider → 502 PROVIDER_UNAVAILABLE; too many starts from one address → 429 with Retry-After', async () => {
        for (let i = 0; i < 2; i++) {
          const res = await get(bare.baseUrl, '/auth/google');
          expect(res.status).to.equal(502);
          expect(res.body.error.code).to.equal('PROVIDER_UNAVAILABLE');
        }
        const limited = await get(bare.baseUrl, '/auth/google');
        expect(limited.status).to.equal(429);
        expect(limited.body.error.code).to.equal('RATE_LIMITED');
        expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
      });
    });
  });
}
