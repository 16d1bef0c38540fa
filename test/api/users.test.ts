import { expect } from 'chai';
import { SignJWT } from 'jose';
import { randomBytes } from 'node:crypto';
import { signInWithSocialIdentity, switchActiveScope, type SocialIdentity } from '../../commands/users.js';
import { httpStatusOf } from '../../api/errors.js';
import { DomainError } from '../../domain/shared/decider.js';
import { userStreamId } from '../../domain/users/index.js';
import { call } from '../support/http.js';
import { login, registerUser, verifyEmailOf } from '../support/identity.js';
import { TestClock } from '../support/clock.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const fieldsOf = (res: { body: any }) => (res.body.error.details?.fields ?? []).map((f: { field: string }) => f.field);
const uniqueEmail = (tag: string) => `${tag}-${Date.now()}-${randomBytes(3).toString('hex')}@example.test`;

for (const mode of availableModes()) {
  describe(`profile (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    const clock = new TestClock();
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' }, { clock });
    });
    after(async () => svc?.stop());

    it('GET /users/me answers the profile', async () => {
      const user = await registerUser(svc.baseUrl, { name: 'Profile Person' });
      const res = await call(svc.baseUrl, 'GET', '/users/me', undefined, user.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.user).to.deep.equal({
        id: user.user.id,
        email: user.email,
        emailVerified: false,
        name: 'Profile Person',
        avatarUrl: null,
        preferences: {},
        createdAt: user.user.createdAt,
        updatedAt: user.user.createdAt,
        activeOrganizationId: null,
        activeWorkspaceId: null,
      });
      expect(res.text).to.not.match(/scrypt|passwordHash|tokensValidAfter/);
    });

    it('refuses a missing, malformed, tampered or foreign-signed credential with 401', async () => {
      const user = await registerUser(svc.baseUrl);
      const [header, payload] = user.token.split('.');
      const forged = await new SignJWT(JSON.parse(Buffer.from(payload, 'base64url').toString()))
        .setProtectedHeader(JSON.parse(Buffer.from(header, 'base64url').toString()))
        .sign(randomBytes(32));
      const tampered = `${header}.${payload}.${user.token.split('.')[2].split('').reverse().join('')}`;
      const attempts: Array<Record<string, string>> = [{}, { Authorization: 'Bearer' }, { Authorization: 'Basic abc' }, { Authorization: 'Bearer not.a.jwt' }, { Authorization: `Bearer ${forged}` }, { Authorization: `Bearer ${tampered}` }];
      for (const headers of attempts) {
        const res = await call(svc.baseUrl, 'GET', '/users/me', undefined, headers);
        expect(res.status, JSON.stringify(headers)).to.equal(401);
        expect(res.body.error.code).to.equal('UNAUTHENTICATED');
      }
      expect((await call(svc.baseUrl, 'PUT', '/users/me', { name: 'x' })).status).to.equal(401);
    });

    it('PUT /users/me updates name, avatar and preferences, and keeps what is left out', async () => {
      const user = await registerUser(svc.baseUrl);
      // Keys and shapes MongoDB-like stores are picky about must come back as they went in.
      const preferences = { theme: 'dark', $odd: { 'dotted.key': [[1, 2], [3]] }, empty: null };
      clock.advance(5);
      const res = await call(svc.baseUrl, 'PUT', '/users/me', { name: ' New Name ', avatarUrl: 'https://cdn.example.test/a.png', preferences }, user.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.user).to.include({ name: 'New Name', avatarUrl: 'https://cdn.example.test/a.png', email: user.email });
      expect(res.body.user.preferences).to.deep.equal(preferences);
      expect(res.body.user.updatedAt > res.body.user.createdAt).to.equal(true);

      const partial = await call(svc.baseUrl, 'PUT', '/users/me', { avatarUrl: null }, user.auth);
      expect(partial.body.user).to.include({ name: 'New Name', avatarUrl: null });
      expect(partial.body.user.preferences).to.deep.equal(preferences);
      const got = await call(svc.baseUrl, 'GET', '/users/me', undefined, user.auth);
      expect(got.body.user).to.deep.equal(partial.body.user);
    });

    it('refuses bad profile input with 400 naming the field, and changes nothing', async () => {
      const user = await registerUser(svc.baseUrl);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ name: 'n'.repeat(101) }, 'body.name'],
        [{ name: '' }, 'body.name'],
        [{ avatarUrl: 'javascript:alert(1)' }, 'body.avatarUrl'],
        [{ avatarUrl: 'ftp://example.test/a.png' }, 'body.avatarUrl'],
        [{ avatarUrl: 'not a url' }, 'body.avatarUrl'],
        [{ preferences: ['not', 'an', 'object'] }, 'body.preferences'],
        [{ preferences: { big: 'x'.repeat(16 * 1024) } }, 'body.preferences'],
        [{ email: 'nope' }, 'body.email'],
        [{ password: 'sneaky password' }, 'body.password'],
        [{ name: 'ok', id: 'other' }, 'body.id'],
      ];
      const head = await svc.services.eventStore.headPosition();
      for (const [body, field] of cases) {
        const res = await call(svc.baseUrl, 'PUT', '/users/me', body, user.auth);
        expect(res.status, `${field}: ${res.text}`).to.equal(400);
        expect(fieldsOf(res)).to.include(field);
      }
      expect(await svc.services.eventStore.headPosition()).to.equal(head);
    });

    it('changes the email: the new one logs in, the old one is free again', async () => {
      const user = await registerUser(svc.baseUrl);
      const newEmail = uniqueEmail('moved');
      const res = await call(svc.baseUrl, 'PUT', '/users/me', { email: newEmail.toUpperCase() }, user.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.user.email).to.equal(newEmail);
      expect((await login(svc.baseUrl, newEmail, user.password)).status).to.equal(200);
      expect((await login(svc.baseUrl, user.email, user.password)).status).to.equal(401);
      const reuse = await registerUser(svc.baseUrl, { email: user.email });
      expect(reuse.user.email).to.equal(user.email);
      // Setting the current email again is a no-op, not a conflict with oneself.
      expect((await call(svc.baseUrl, 'PUT', '/users/me', { email: newEmail }, user.auth)).status).to.equal(200);
    });

    it("refuses another account's email with 409 EMAIL_TAKEN and applies nothing of that request", async () => {
      const [a, b] = [await registerUser(svc.baseUrl), await registerUser(svc.baseUrl)];
      const res = await call(svc.baseUrl, 'PUT', '/users/me', { email: b.email.toUpperCase(), name: 'Should Not Stick' }, a.auth);
      expect(res.status, res.text).to.equal(409);
      expect(res.body.error.code).to.equal('EMAIL_TAKEN');
      const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, a.auth);
      expect(me.body.user).to.include({ email: a.email, name: a.user.name });
      expect((await login(svc.baseUrl, b.email, b.password)).status).to.equal(200);
    });

    it('lets an API key read and edit the profile but not change the email (403)', async () => {
      const user = await registerUser(svc.baseUrl);
      const key = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'profile' }, user.auth);
      const auth = { Authorization: `Bearer ${key.body.key}` };
      expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, auth)).body.user.id).to.equal(user.user.id);
      expect((await call(svc.baseUrl, 'PUT', '/users/me', { name: 'Via Key' }, auth)).body.user.name).to.equal('Via Key');
      const res = await call(svc.baseUrl, 'PUT', '/users/me', { email: uniqueEmail('key') }, auth);
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('FORBIDDEN');
    });
  });

  describe(`social identities and active scope, as colleagues call them (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    });
    after(async () => svc?.stop());

    const context = () => ({ actorId: null, orgId: null, workspaceId: null, correlationId: 'test', causationId: null, requestId: null, now: new Date() });
    const identity = (over: Partial<SocialIdentity> = {}): SocialIdentity => ({
      provider: 'github',
      subject: randomBytes(6).toString('hex'),
      email: uniqueEmail('social'),
      emailVerified: true,
      name: 'Octo Cat',
      avatarUrl: 'https://avatars.example.test/u/1',
      ...over,
    });
    const accounts = () => ({
      eventStore: svc.services.eventStore,
      newId: () => svc.services.newId(),
      waitForProjection: (position: number, streamId: string) => svc.services.projections.waitFor(position, streamId, svc.services.config.READ_YOUR_WRITES_TIMEOUT_MS),
    });
    const tokenFor = async (userId: string) => ({ Authorization: `Bearer ${(await svc.services.tokens.issue({ userId, orgId: null, workspaceId: null })).token}` });
    async function expectDomainError(promise: Promise<unknown>, code: string, status: number) {
      const err = await promise.then(() => null, (e: unknown) => e);
      expect(err, `expected ${code}`).to.be.instanceOf(DomainError);
      expect(err).to.include({ code });
      // The HTTP answer is mapped from the error's kind once, at the edge.
      expect(httpStatusOf(err as DomainError)).to.equal(status);
    }

    it('creates a passwordless user once per (provider, subject), usable by a token at once', async () => {
      const who = identity();
      const first = await signInWithSocialIdentity(accounts(), context(), who);
      expect(first.created).to.equal(true);
      const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, await tokenFor(first.userId));
      expect(me.status, me.text).to.equal(200);
      expect(me.body.user).to.include({ email: who.email, name: 'Octo Cat', avatarUrl: who.avatarUrl });
      const again = await signInWithSocialIdentity(accounts(), context(), { ...who, email: uniqueEmail('changed'), name: null });
      expect(again).to.deep.equal({ userId: first.userId, created: false });
      const password = await call(svc.baseUrl, 'POST', '/auth/login', { email: who.email, password: 'any password at all' });
      expect(password.status).to.equal(401);
      expect(password.body.error.code).to.equal('INVALID_CREDENTIALS');
      // The email is taken like any other account's.
      const register = await call(svc.baseUrl, 'POST', '/auth/register', { email: who.email, password: 'long enough pw', name: 'X' });
      expect(register.status).to.equal(409);
    });

    it('links to the account with the same email only when the address is verified on both sides', async () => {
      const user = await registerUser(svc.baseUrl);
      await expectDomainError(signInWithSocialIdentity(accounts(), context(), identity({ email: user.email.toUpperCase(), emailVerified: false })), 'EMAIL_TAKEN', 409);
      const google = identity({ provider: 'google', email: user.email, emailVerified: true });
      // Verified by the provider, but not by our account: the registrant may not own the address.
      await expectDomainError(signInWithSocialIdentity(accounts(), context(), google), 'ACCOUNT_EMAIL_UNVERIFIED', 409);
      await verifyEmailOf(svc.baseUrl, svc.services.config.DATA_DIR, user.email, user.password);
      expect(await signInWithSocialIdentity(accounts(), context(), google)).to.deep.equal({ userId: user.user.id, created: false });
      expect(await signInWithSocialIdentity(accounts(), context(), google)).to.deep.equal({ userId: user.user.id, created: false });
      expect((await login(svc.baseUrl, user.email, user.password)).status, 'the password still works').to.equal(200);
      // A second Google account cannot attach to an account that already has one.
      await expectDomainError(signInWithSocialIdentity(accounts(), context(), { ...google, subject: 'another-google-subject' }), 'SOCIAL_PROVIDER_ALREADY_LINKED', 409);
    });

    it('creates an account only for an email the provider verified, and refuses one without an email', async () => {
      await expectDomainError(signInWithSocialIdentity(accounts(), context(), identity({ emailVerified: false })), 'SOCIAL_EMAIL_UNVERIFIED', 400);
      expect((await signInWithSocialIdentity(accounts(), context(), identity({ emailVerified: true }))).created).to.equal(true);
      await expectDomainError(signInWithSocialIdentity(accounts(), context(), identity({ email: null })), 'SOCIAL_EMAIL_REQUIRED', 400);
      await expectDomainError(signInWithSocialIdentity(accounts(), context(), identity({ email: 'not an email' })), 'SOCIAL_EMAIL_INVALID', 400);
    });

    it('switchActiveScope records the active organization; login then carries it', async () => {
      const user = await registerUser(svc.baseUrl);
      const result = await switchActiveScope(svc.services.eventStore, context(), user.user.id, 'org-1', 'ws-1');
      await svc.services.projections.waitFor(result.position!, userStreamId(user.user.id), 5000);
      const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, user.auth);
      expect(me.body.user).to.include({ activeOrganizationId: 'org-1', activeWorkspaceId: 'ws-1' });
      const token = (await login(svc.baseUrl, user.email, user.password)).token!;
      expect(JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString())).to.include({ org: 'org-1', ws: 'ws-1' });
      const back = await switchActiveScope(svc.services.eventStore, context(), user.user.id, null, null);
      await svc.services.projections.waitFor(back.position!, userStreamId(user.user.id), 5000);
      expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, user.auth)).body.user.activeOrganizationId).to.equal(null);
    });
  });

  describe(`token expiry (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    const clock = new TestClock();
    before(async () => {
      // A TTL far longer than a slow machine's login → first call, so only the advanced clock expires it.
      svc = await startTestService(mode, { JWT_TTL_SECONDS: '600' }, { clock });
    });
    after(async () => svc?.stop());

    it('refuses a JWT once it has expired', async () => {
      const user = await registerUser(svc.baseUrl);
      const fresh = await login(svc.baseUrl, user.email, user.password);
      expect(fresh.body.expiresIn).to.equal(600);
      expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, fresh.auth!)).status).to.equal(200);
      clock.advance(601_000);
      const res = await call(svc.baseUrl, 'GET', '/users/me', undefined, fresh.auth!);
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('UNAUTHENTICATED');
    });
  });
}
