import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { signInIdForState } from '../../commands/signins.js';
import { hashPassword } from '../../commands/users-credentials.js';
import { registerUser as registerUserCommand } from '../../commands/users.js';
import { userStreamId } from '../../domain/users/index.js';
import { TestClock } from '../support/clock.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';
import { call } from '../support/http.js';
import { login, mailsTo, registerUser, verificationTokenFor, verifyEmailOf, type RegisteredUser } from '../support/identity.js';
import { Browser, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { addMember, bearer, createOrg } from './orgs-support.js';

const FRONTEND = 'http://127.0.0.1:5999/app';
const HOUR = 3_600_000;
let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;
const uniqueEmail = (prefix: string) => `${unique(prefix)}@example.test`;

const fragmentOf = (location: string) => {
  expect(location.startsWith(`${FRONTEND}/auth/callback#`), location).to.equal(true);
  return new URLSearchParams(new URL(location).hash.slice(1));
};

for (const mode of availableModes()) {
  describe(`email ownership (${mode})`, function () {
    this.timeout(90_000);
    let idp: TestOidcProvider;
    let gh: FakeGitHub;
    let svc: TestService;
    /** A second service whose clock the expiry tests move by days, so the first keeps real time. */
    let aged: TestService;
    const clock = new TestClock();

    before(async () => {
      idp = await startOidcProvider();
      gh = await startFakeGitHub();
      const env = {
        GOOGLE_ISSUER: idp.issuer,
        GOOGLE_CLIENT_ID: idp.clientId,
        GOOGLE_CLIENT_SECRET: idp.clientSecret,
        ...gh.env(),
        FRONTEND_URL: FRONTEND,
        RATE_LIMIT_AUTH_PER_MINUTE: '1000',
      };
      svc = await startTestService(mode, env);
      aged = await startTestService(mode, { ...env, EMAIL_VERIFICATION_TTL_HOURS: '48', UNVERIFIED_ACCOUNT_TTL_HOURS: '168' }, { clock });
      await idp.register([svc, aged].map((s) => `${new URL(s.baseUrl).origin}/api/auth/google/callback`));
    });
    after(async () => {
      await svc?.stop();
      await aged?.stop();
      await idp?.stop();
      await gh?.stop();
    });

    const dataDir = (s: TestService) => s.services.config.DATA_DIR;
    const me = (s: TestService, auth: Record<string, string>) => call(s.baseUrl, 'GET', '/users/me', undefined, auth);
    const verify = (s: TestService, token: string, password?: string) => call(s.baseUrl, 'POST', '/auth/verify-email', { token, password });
    const userEvents = async (s: TestService, userId: string) => s.services.eventStore.readStream(userStreamId(userId));

    /** Through the provider as a browser would; answers the callback's raw answer and the attempt's state. */
    async function socialCallback(s: TestService, provider: 'google' | 'github') {
      const started = await fetch(`${s.baseUrl}/auth/${provider}`, { redirect: 'manual' });
      expect(started.status).to.equal(302);
      const callbackPrefix = `${new URL(s.baseUrl).origin}/api/auth/${provider}/callback`;
      const callbackUrl = await new Browser().followUntil(started.headers.get('location')!, callbackPrefix);
      const res = await fetch(callbackUrl, { redirect: 'manual' });
      return { res, state: new URL(callbackUrl).searchParams.get('state')! };
    }
    const signInEvents = async (s: TestService, state: string) => s.services.eventStore.readStream(`signin-${signInIdForState(state)}`);

    describe('verification by mail', () => {
      it('a password sign-up gets a mail with a single-use link; the account can log in meanwhile; the token verifies it', async () => {
        const user = await registerUser(svc.baseUrl);
        const mails = mailsTo(dataDir(svc), user.email);
        expect(mails.map((m) => m.subject)).to.deep.equal(['Verify your email address']);
        expect(mails[0].text).to.include(`${FRONTEND}/verify-email?token=`);
        const token = verificationTokenFor(dataDir(svc), user.email)!;
        expect(token.startsWith(`${user.user.id}.`)).to.equal(true);

        expect((await me(svc, user.auth)).body.user.emailVerified).to.equal(false);
        expect((await login(svc.baseUrl, user.email, user.password)).status, 'an unverified account logs in').to.equal(200);

        const res = await verify(svc, token, user.password);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({ success: true, message: 'the email address is verified', email: user.email });
        expect((await me(svc, user.auth)).body.user.emailVerified).to.equal(true);

        const events = await userEvents(svc, user.user.id);
        expect(events.map((e) => e.type)).to.deep.equal(['UserRegistered', 'EmailVerificationRequested', 'EmailVerified']);
        expect(events[0].data).to.include({ emailVerified: false });
        // Only the hash of the secret is in the log.
        const secret = token.slice(token.indexOf('.') + 1);
        expect(JSON.stringify(await svc.services.eventStore.readAll())).to.not.include(secret);
      });

      it('a wrong, malformed or reused token → 400 INVALID_VERIFICATION_TOKEN', async () => {
        const user = await registerUser(svc.baseUrl);
        const token = verificationTokenFor(dataDir(svc), user.email)!;
        const wrong = `${user.user.id}.${randomBytes(32).toString('base64url')}`;
        for (const bad of [wrong, 'no-dot-at-all', `${user.user.id}.short`, `unknown-user.${randomBytes(32).toString('base64url')}`]) {
          const res = await verify(svc, bad);
          expect(res.status, bad).to.equal(400);
          expect(res.body.error.code, bad).to.equal('INVALID_VERIFICATION_TOKEN');
          expect(res.body.error.details).to.deep.equal({ field: 'body.token' });
        }
        expect((await verify(svc, token, user.password)).status).to.equal(200);
        const reused = await verify(svc, token, user.password);
        expect(reused.status).to.equal(400);
        expect(reused.body.error.code).to.equal('INVALID_VERIFICATION_TOKEN');
        const empty = await call(svc.baseUrl, 'POST', '/auth/verify-email', {});
        expect(empty.status).to.equal(400);
        expect(empty.body.error.code).to.equal('VALIDATION_FAILED');
      });

      it('resend mails a new link and the earlier one stops working; the answer is the same for an unknown email', async () => {
        const user = await registerUser(svc.baseUrl);
        const first = verificationTokenFor(dataDir(svc), user.email)!;
        const res = await call(svc.baseUrl, 'POST', '/auth/resend-verification', { email: user.email.toUpperCase() });
        expect(res.status, res.text).to.equal(200);
        const unknown = await call(svc.baseUrl, 'POST', '/auth/resend-verification', { email: uniqueEmail('nobody') });
        expect(unknown.status).to.equal(200);
        expect(unknown.body).to.deep.equal(res.body);
        // The mail goes out after the answer.
        await waitUntil('the second verification mail', async () => mailsTo(dataDir(svc), user.email).length >= 2);
        const second = verificationTokenFor(dataDir(svc), user.email)!;
        expect(second).to.not.equal(first);
        expect((await verify(svc, first)).body.error.code).to.equal('INVALID_VERIFICATION_TOKEN');
        expect((await verify(svc, second, user.password)).status).to.equal(200);
      });

      it('changing the email makes it unverified again and mails the new address', async () => {
        const user = await registerUser(svc.baseUrl);
        await verifyEmailOf(svc.baseUrl, dataDir(svc), user.email, user.password);
        const next = uniqueEmail('moved');
        const res = await call(svc.baseUrl, 'PUT', '/users/me', { email: next }, user.auth);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.user).to.include({ email: next, emailVerified: false });
        expect(mailsTo(dataDir(svc), next).map((m) => m.subject)).to.deep.equal(['Verify your email address']);
        await verifyEmailOf(svc.baseUrl, dataDir(svc), next, user.password);
        expect((await me(svc, user.auth)).body.user).to.include({ email: next, emailVerified: true });
      });

      it('resend is rate limited per email like the other auth operations (429 with Retry-After)', async () => {
        const limited = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '2' });
        try {
          const email = uniqueEmail('limited');
          for (let i = 0; i < 2; i++) expect((await call(limited.baseUrl, 'POST', '/auth/resend-verification', { email })).status).to.equal(200);
          const res = await call(limited.baseUrl, 'POST', '/auth/resend-verification', { email });
          expect(res.status).to.equal(429);
          expect(res.body.error.code).to.equal('RATE_LIMITED');
          expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
        } finally {
          await limited.stop();
        }
      });

      it('documents the operations in the OpenAPI document', async () => {
        const doc = (await call(svc.baseUrl, 'GET', '/openapi.json')).body;
        expect(doc.paths['/auth/verify-email'].post.responses).to.include.keys('200', '400', '429');
        expect(doc.paths['/auth/resend-verification'].post.responses).to.include.keys('200', '429');
      });
    });

    describe('social sign-in and unverified accounts', () => {
      it('does not link an unverified account: 302 to the front end with error=ACCOUNT_EMAIL_UNVERIFIED; after verifying, it links', async () => {
        const user = await registerUser(svc.baseUrl);
        idp.nextLogin = { sub: unique('g'), email: user.email, emailVerified: true, name: 'Victim' };
        const refused = await socialCallback(svc, 'google');
        expect(refused.res.status, await refused.res.clone().text()).to.equal(302);
        expect(refused.res.headers.get('referrer-policy')).to.equal('no-referrer');
        const fragment = fragmentOf(refused.res.headers.get('location')!);
        expect(fragment.get('error')).to.equal('ACCOUNT_EMAIL_UNVERIFIED');
        expect(fragment.get('provider')).to.equal('google');
        expect(fragment.get('message')).to.match(/sign in with its password/);
        expect(fragment.has('token'), 'no token for a refused sign-in').to.equal(false);
        expect((await signInEvents(svc, refused.state)).at(-1)!.data).to.include({ reason: 'ACCOUNT_EMAIL_UNVERIFIED' });
        expect((await me(svc, user.auth)).body.user.id).to.equal(user.user.id);
        expect((await userEvents(svc, user.user.id)).map((e) => e.type)).to.not.include('SocialIdentityLinked');

        // The person signs in with the password, verifies the email, and signs in with Google again.
        expect((await login(svc.baseUrl, user.email, user.password)).status).to.equal(200);
        await verifyEmailOf(svc.baseUrl, dataDir(svc), user.email, user.password);
        const linked = await socialCallback(svc, 'google');
        expect(linked.res.status).to.equal(302);
        const params = fragmentOf(linked.res.headers.get('location')!);
        expect(params.get('new')).to.equal('false');
        expect((await me(svc, bearer(params.get('token')!))).body.user).to.include({ id: user.user.id, emailVerified: true });
      });

      it('an account created by social sign-in with a verified provider email is verified from the start', async () => {
        const id = 200_000 + ++counter;
        const email = uniqueEmail('octo');
        gh.nextUser = { id, login: `octo${id}`, name: null, email: null, avatarUrl: `https://avatars.example.test/u/${id}`, emails: [{ email, primary: true, verified: true }] };
        const { res } = await socialCallback(svc, 'github');
        expect(res.status).to.equal(302);
        const params = fragmentOf(res.headers.get('location')!);
        expect(params.get('new')).to.equal('true');
        const profile = (await me(svc, bearer(params.get('token')!))).body.user;
        expect(profile).to.include({ email, emailVerified: true });
        expect(mailsTo(dataDir(svc), email), 'no verification mail for a verified address').to.have.length(0);
      });

      it('an email the provider did not verify creates nothing: 400 SOCIAL_EMAIL_UNVERIFIED', async () => {
        idp.nextLogin = { sub: unique('g'), email: uniqueEmail('unproven'), emailVerified: false, name: 'Nobody Yet' };
        const { res, state } = await socialCallback(svc, 'google');
        expect(res.status).to.equal(400);
        expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('SOCIAL_EMAIL_UNVERIFIED');
        expect((await signInEvents(svc, state)).at(-1)!.data).to.include({ reason: 'SOCIAL_EMAIL_UNVERIFIED' });
      });
    });

    describe('expiry of unverified accounts (injected clock)', () => {
      let unverified: RegisteredUser;
      let verified: RegisteredUser;
      let legacy: { email: string; password: string; userId: string };
      let unverifiedKey: string;
      let expiredOwner: RegisteredUser;

      before(async () => {
        unverified = await registerUser(aged.baseUrl);
        verified = await registerUser(aged.baseUrl);
        await verifyEmailOf(aged.baseUrl, dataDir(aged), verified.email, verified.password);
        expiredOwner = await registerUser(aged.baseUrl);
        const key = await call(aged.baseUrl, 'POST', '/api-keys', { name: 'before expiry', scopes: ['view_resources'] }, unverified.auth);
        expect(key.status, key.text).to.equal(201);
        unverifiedKey = key.body.key;
        // An account as recorded before verification existed: UserRegistered without the flag, no request.
        legacy = { email: uniqueEmail('legacy'), password: 'a legacy password', userId: aged.services.newId() };
        const context = { actorId: legacy.userId, orgId: null, workspaceId: null, correlationId: 'legacy', causationId: null, requestId: null, now: clock.now() };
        const result = await registerUserCommand(aged.services.eventStore, context, {
          userId: legacy.userId, email: legacy.email, name: 'Legacy', passwordHash: await hashPassword(legacy.password),
        });
        await aged.services.projections.waitFor(result.position!, userStreamId(legacy.userId), 5000);
      });

      it('within the TTL an unverified account logs in; past it, login answers 403 UNVERIFIED_ACCOUNT_EXPIRED and its credentials stop', async () => {
        clock.advance(167 * HOUR);
        expect((await login(aged.baseUrl, unverified.email, unverified.password)).status).to.equal(200);
        clock.advance(HOUR + 1000);
        const res = await login(aged.baseUrl, unverified.email, unverified.password);
        expect(res.status).to.equal(403);
        expect(res.body.error.code).to.equal('UNVERIFIED_ACCOUNT_EXPIRED');
        // Only someone with the password learns that: a wrong one is still the usual 401.
        expect((await login(aged.baseUrl, unverified.email, 'not the password')).body.error.code).to.equal('INVALID_CREDENTIALS');
        const viaKey = await me(aged, bearer(unverifiedKey));
        expect(viaKey.status).to.equal(401);
        expect(viaKey.body.error.code).to.equal('UNVERIFIED_ACCOUNT_EXPIRED');
      });

      it('verified accounts and accounts registered before verification existed keep working', async () => {
        expect((await login(aged.baseUrl, verified.email, verified.password)).status).to.equal(200);
        const old = await login(aged.baseUrl, legacy.email, legacy.password);
        expect(old.status, JSON.stringify(old.body)).to.equal(200);
        expect((await me(aged, old.auth!)).body.user.emailVerified).to.equal(true);
      });

      it('the real owner can register the email of an expired account: the reservation is taken over with an event on the old account', async () => {
        const owner = await registerUser(aged.baseUrl, { email: unverified.email.toUpperCase(), password: 'the real owner password' });
        expect(owner.user.id).to.not.equal(unverified.user.id);
        const oldEvents = await userEvents(aged, unverified.user.id);
        expect(oldEvents.at(-1)!.type).to.equal('UnverifiedAccountExpired');
        expect(oldEvents.at(-1)!.data).to.include({ email: unverified.email.toLowerCase() });
        expect(oldEvents.at(-1)!.metadata.actorId, 'who took it over').to.equal(owner.user.id);
        // The email now signs in to the new account only.
        expect((await login(aged.baseUrl, unverified.email, 'the real owner password')).status).to.equal(200);
        expect((await login(aged.baseUrl, unverified.email, unverified.password)).body.error.code).to.equal('INVALID_CREDENTIALS');
        expect((await me(aged, bearer(unverifiedKey))).status).to.equal(401);
        // A verified account's email is never taken over.
        const taken = await call(aged.baseUrl, 'POST', '/auth/register', { email: verified.email, password: 'somebody else pw', name: 'X' });
        expect(taken.status).to.equal(409);
        expect(taken.body.error.code).to.equal('EMAIL_TAKEN');
      });

      it('social sign-in with a verified provider email takes over an expired account\'s email as a new verified account', async () => {
        idp.nextLogin = { sub: unique('g'), email: expiredOwner.email, emailVerified: true, name: 'Real Owner' };
        const { res } = await socialCallback(aged, 'google');
        expect(res.status, await res.clone().text()).to.equal(302);
        const params = fragmentOf(res.headers.get('location')!);
        expect(params.get('new')).to.equal('true');
        const profile = (await me(aged, bearer(params.get('token')!))).body.user;
        expect(profile).to.include({ email: expiredOwner.email, emailVerified: true });
        expect(profile.id).to.not.equal(expiredOwner.user.id);
        expect((await userEvents(aged, expiredOwner.user.id)).at(-1)!.type).to.equal('UnverifiedAccountExpired');
      });

      it('a verification token expires after EMAIL_VERIFICATION_TTL_HOURS: 400 VERIFICATION_TOKEN_EXPIRED', async () => {
        const user = await registerUser(aged.baseUrl);
        const token = verificationTokenFor(dataDir(aged), user.email)!;
        clock.advance(48 * HOUR + 1000);
        const res = await verify(aged, token);
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('VERIFICATION_TOKEN_EXPIRED');
      });
    });

    describe('a deleted organization', () => {
      it('stops being anyone\'s active one: login, old tokens and API keys fall back to the personal workspace', async () => {
        const owner = await registerUser(svc.baseUrl);
        const { org } = await createOrg(svc, owner);
        const admin = await addMember(svc, owner, org.id, 'admin');
        const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, admin.auth);
        expect(switched.status, switched.text).to.equal(200);
        const scoped = bearer(switched.body.token);
        const key = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'org scoped', scopes: ['view_resources'] }, scoped);
        expect(key.status, key.text).to.equal(201);
        expect((await me(svc, admin.auth)).body.user.activeOrganizationId).to.equal(org.id);

        expect((await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}`, undefined, owner.auth)).status).to.equal(200);

        expect((await me(svc, admin.auth)).body.user).to.include({ activeOrganizationId: null, activeWorkspaceId: null });
        const fresh = await login(svc.baseUrl, admin.email, admin.password);
        const claims = JSON.parse(Buffer.from(fresh.token!.split('.')[1], 'base64url').toString());
        expect(claims).to.include({ org: null, ws: null });
        // The token issued while the organization was active, and the API key following the account, work in the personal workspace.
        for (const auth of [scoped, bearer(key.body.key)]) {
          const flows = await call(svc.baseUrl, 'GET', '/flows', undefined, auth);
          expect(flows.status, flows.text).to.equal(200);
          const active = await call(svc.baseUrl, 'GET', '/orgs/active', undefined, auth);
          expect(active.body).to.deep.equal({ success: true, organization: null, workspace: null });
        }
      });
    });
  });
}
