import { expect } from 'chai';
import { call } from '../support/http.js';
import { callFrom, login, mailsTo, registerUser, verifyEmailOf } from '../support/identity.js';
import { TestClock } from '../support/clock.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';

const jwtPayload = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
const uniqueEmail = (tag: string) => `${tag}-${Date.now()}-${Math.random().toString(16).slice(2, 8)}@Example.test`;
const fieldsOf = (res: { body: any }) => (res.body.error.details?.fields ?? []).map((f: { field: string }) => f.field);

/** The password reset mails to `email` (a sign-up also mails a verification link to it). */
const resetMailsTo = (svc: TestService, email: string) => mailsTo(svc.services.config.DATA_DIR, email).filter((m) => m.subject === 'Reset your password');

/** The reset token from the newest reset mail to `email` (waiting for it: the mail is sent after the answer). */
async function resetTokenFor(svc: TestService, email: string, count = 1): Promise<string> {
  const mails = await waitUntil(`reset mail #${count} to ${email}`, async () => {
    const found = resetMailsTo(svc, email);
    return found.length >= count ? found : null;
  });
  const match = /reset-password\?token=(\S+)/.exec(mails[count - 1].text);
  expect(match, 'the mail carries a reset link').to.not.equal(null);
  return decodeURIComponent(match![1]);
}

for (const mode of availableModes()) {
  describe(`authentication (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    const clock = new TestClock();
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', FRONTEND_URL: 'http://front.test:5173' }, { clock });
    });
    after(async () => svc?.stop());

    describe('register', () => {
      it('answers 201 with the user and a personal-workspace token that authenticates at once', async () => {
        const email = uniqueEmail('reg');
        const res = await call(svc.baseUrl, 'POST', '/auth/register', { email, password: 'correct horse battery', name: '  Ann  ' });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.success).to.equal(true);
        expect(res.body.user).to.have.all.keys('id', 'email', 'name', 'createdAt');
        expect(res.body.user).to.include({ email: email.toLowerCase(), name: 'Ann' });
        expect(res.body.expiresIn).to.equal(3600);
        const claims = jwtPayload(res.body.token);
        expect(claims).to.include({ sub: res.body.user.id, org: null, ws: null });
        const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, { Authorization: `Bearer ${res.body.token}` });
        expect(me.status, me.text).to.equal(200);
        expect(me.body.user).to.include({ id: res.body.user.id, activeOrganizationId: null, activeWorkspaceId: null });
      });

      it('refuses the same email in any case with 409 EMAIL_TAKEN', async () => {
        const first = await registerUser(svc.baseUrl, { email: uniqueEmail('dup') });
        const res = await call(svc.baseUrl, 'POST', '/auth/register', { email: `  ${first.email.toUpperCase()} `, password: 'another password', name: 'B' });
        expect(res.status, res.text).to.equal(409);
        expect(res.body).to.deep.include({ success: false });
        expect(res.body.error.code).to.equal('EMAIL_TAKEN');
      });

      it('lets exactly one of concurrent registrations of one email win', async () => {
        const email = uniqueEmail('race');
        const results = await Promise.all(
          Array.from({ length: 5 }, (_, i) => call(svc.baseUrl, 'POST', '/auth/register', { email, password: `password-${i}-long`, name: `R${i}` })),
        );
        expect(results.map((r) => r.status).sort()).to.deep.equal([201, 409, 409, 409, 409]);
      });

      it('refuses bad input with 400 naming the field, and appends nothing', async () => {
        const ok = { email: uniqueEmail('bad'), password: 'long enough!', name: 'N' };
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ ...ok, email: 'not-an-email' }, 'body.email'],
          [{ ...ok, email: `${'a'.repeat(250)}@x.test` }, 'body.email'],
          [{ ...ok, password: 'nine char' }, 'body.password'],
          [{ ...ok, password: 'x'.repeat(201) }, 'body.password'],
          [{ ...ok, name: 'n'.repeat(101) }, 'body.name'],
          [{ ...ok, name: '   ' }, 'body.name'],
          [{ ...ok, role: 'admin' }, 'body.role'],
          [{ email: ok.email, password: ok.password }, 'body.name'],
        ];
        const head = await svc.services.eventStore.headPosition();
        for (const [body, field] of cases) {
          const res = await call(svc.baseUrl, 'POST', '/auth/register', body);
          expect(res.status, `${field}: ${res.text}`).to.equal(400);
          expect(res.body.error.code).to.equal('VALIDATION_FAILED');
          expect(fieldsOf(res)).to.include(field);
        }
        expect(await svc.services.eventStore.headPosition()).to.equal(head);
      });

      it('accepts passwords of exactly 10 and 200 characters', async () => {
        for (const password of ['x'.repeat(10), 'y'.repeat(200)]) {
          const user = await registerUser(svc.baseUrl, { password });
          expect((await login(svc.baseUrl, user.email, password)).status).to.equal(200);
        }
      });
    });

    describe('login', () => {
      it('answers 200 with token, expiresIn and user; the email is case-insensitive', async () => {
        const user = await registerUser(svc.baseUrl);
        const res = await call(svc.baseUrl, 'POST', '/auth/login', { email: user.email.toUpperCase(), password: user.password });
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.include({ success: true, expiresIn: 3600 });
        expect(res.body.user).to.deep.equal(user.user);
        const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, { Authorization: `Bearer ${res.body.token}` });
        expect(me.status).to.equal(200);
      });

      it('answers a wrong password and an unknown email with the same 401 body', async () => {
        const user = await registerUser(svc.baseUrl);
        const wrongPassword = await call(svc.baseUrl, 'POST', '/auth/login', { email: user.email, password: 'not the password' });
        const unknownEmail = await call(svc.baseUrl, 'POST', '/auth/login', { email: uniqueEmail('nobody'), password: 'not the password' });
        expect(wrongPassword.status).to.equal(401);
        expect(unknownEmail.status).to.equal(401);
        expect(wrongPassword.body.error.code).to.equal('INVALID_CREDENTIALS');
        expect(wrongPassword.body).to.deep.equal(unknownEmail.body);
      });

      it('refuses bad input with 400 naming the field', async () => {
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ email: 'nope', password: 'whatever123' }, 'body.email'],
          [{ email: 'a@b.test', password: '' }, 'body.password'],
          [{ email: 'a@b.test', password: 'p'.repeat(201) }, 'body.password'],
          [{ email: 'a@b.test', password: 'whatever123', remember: true }, 'body.remember'],
        ];
        for (const [body, field] of cases) {
          const res = await call(svc.baseUrl, 'POST', '/auth/login', body);
          expect(res.status, res.text).to.equal(400);
          expect(fieldsOf(res)).to.include(field);
        }
      });
    });

    describe('password reset', () => {
      it('answers forgot-password the same whether or not the email exists, and mails only the account holder', async () => {
        const user = await registerUser(svc.baseUrl);
        const nobody = uniqueEmail('ghost').toLowerCase();
        // The unknown address first: the known one's mail, asked for after it, is the later event
        // that proves a mail to the unknown address would have been sent by then.
        const unknown = await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email: nobody });
        const known = await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email: user.email });
        expect(known.status).to.equal(200);
        expect(unknown.status).to.equal(200);
        expect(known.body).to.deep.equal(unknown.body);
        const token = await resetTokenFor(svc, user.email);
        expect(token.startsWith(`${user.user.id}.`)).to.equal(true);
        const mail = resetMailsTo(svc, user.email)[0];
        expect(mail.text).to.contain('http://front.test:5173/reset-password?token=');
        expect(mailsTo(svc.services.config.DATA_DIR, nobody)).to.deep.equal([]);
      });

      it('sets the new password once, refuses JWTs issued before it, and keeps API keys valid', async () => {
        const user = await registerUser(svc.baseUrl);
        // Verified: a never-verified account's reset starts over instead (users-pre-hijacking.test.ts).
        await verifyEmailOf(svc.baseUrl, svc.services.config.DATA_DIR, user.email, user.password);
        const key = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'survives reset' }, user.auth);
        expect(key.status, key.text).to.equal(201);
        // Token lifetimes are in whole seconds: make sure the old token is from an earlier second.
        clock.advance(1100);
        await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email: user.email });
        const token = await resetTokenFor(svc, user.email);
        const newPassword = 'a brand new passphrase';

        const reset = await call(svc.baseUrl, 'POST', '/auth/reset-password', { token, password: newPassword });
        expect(reset.status, reset.text).to.equal(200);
        expect(reset.body.success).to.equal(true);

        expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, user.auth)).status, 'old JWT').to.equal(401);
        expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, { Authorization: `Bearer ${key.body.key}` })).status, 'API key').to.equal(200);
        expect((await login(svc.baseUrl, user.email, user.password)).status, 'old password').to.equal(401);
        const fresh = await login(svc.baseUrl, user.email, newPassword);
        expect(fresh.status, 'new password').to.equal(200);
        expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, fresh.auth!)).status, 'new JWT').to.equal(200);

        const again = await call(svc.baseUrl, 'POST', '/auth/reset-password', { token, password: 'yet another password' });
        expect(again.status).to.equal(400);
        expect(again.body.error.code).to.equal('INVALID_RESET_TOKEN');
      });

      it('accepts only the newest token', async () => {
        const user = await registerUser(svc.baseUrl);
        await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email: user.email });
        const first = await resetTokenFor(svc, user.email, 1);
        await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email: user.email });
        const second = await resetTokenFor(svc, user.email, 2);
        const stale = await call(svc.baseUrl, 'POST', '/auth/reset-password', { token: first, password: 'password from old mail' });
        expect(stale.status).to.equal(400);
        expect(stale.body.error.code).to.equal('INVALID_RESET_TOKEN');
        expect((await call(svc.baseUrl, 'POST', '/auth/reset-password', { token: second, password: 'password from new mail' })).status).to.equal(200);
      });

      it('refuses an expired token with 400 RESET_TOKEN_EXPIRED', async () => {
        const user = await registerUser(svc.baseUrl);
        await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email: user.email });
        const token = await resetTokenFor(svc, user.email);
        const realNow = svc.services.now;
        svc.services.now = () => new Date(Date.now() + 31 * 60_000);
        try {
          const res = await call(svc.baseUrl, 'POST', '/auth/reset-password', { token, password: 'too late for this' });
          expect(res.status, res.text).to.equal(400);
          expect(res.body.error.code).to.equal('RESET_TOKEN_EXPIRED');
        } finally {
          svc.services.now = realNow;
        }
        expect((await login(svc.baseUrl, user.email, user.password)).status, 'password unchanged').to.equal(200);
      });

      it('refuses forged, malformed and unknown tokens, and bad input', async () => {
        const user = await registerUser(svc.baseUrl);
        const tokens = [`${user.user.id}.${'A'.repeat(43)}`, 'no-dot-here', `${'00000000-0000-0000-0000-000000000000'}.${'B'.repeat(43)}`, '.x', 'a.b c'];
        for (const token of tokens) {
          const res = await call(svc.baseUrl, 'POST', '/auth/reset-password', { token, password: 'whatever password' });
          expect(res.status, token).to.equal(400);
          expect(res.body.error.code).to.equal('INVALID_RESET_TOKEN');
        }
        const cases: Array<[string, Record<string, unknown>, string]> = [
          ['/auth/reset-password', { token: 'a.b', password: 'short' }, 'body.password'],
          ['/auth/reset-password', { token: '', password: 'long enough pw' }, 'body.token'],
          ['/auth/reset-password', { token: 'a.b', password: 'long enough pw', email: 'x@y.test' }, 'body.email'],
          ['/auth/forgot-password', { email: 'not an email' }, 'body.email'],
          ['/auth/forgot-password', { email: 'a@b.test', extra: 1 }, 'body.extra'],
        ];
        for (const [path, body, field] of cases) {
          const res = await call(svc.baseUrl, 'POST', path, body);
          expect(res.status, `${path} ${field}`).to.equal(400);
          expect(fieldsOf(res)).to.include(field);
        }
      });
    });

    it('stores no plaintext password, reset token or API key in any event', async () => {
      const password = `plain-${Date.now()}-secret`;
      const user = await registerUser(svc.baseUrl, { password });
      const key = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'scan me' }, user.auth);
      await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email: user.email });
      const token = await resetTokenFor(svc, user.email);
      const newPassword = `new-${Date.now()}-secret`;
      expect((await call(svc.baseUrl, 'POST', '/auth/reset-password', { token, password: newPassword })).status).to.equal(200);
      const log = JSON.stringify(await svc.services.eventStore.readAll({ after: 0, maxCount: 100_000 }));
      const keySecret = key.body.key.split('.')[1];
      for (const secret of [password, newPassword, token.split('.')[1], keySecret, key.body.key]) expect(log).to.not.contain(secret);
      expect(log).to.contain(user.user.id);
    });
  });

  describe(`authentication rate limits (${mode})`, function () {
    this.timeout(60_000);
    const LIMIT = 3;
    let svc: TestService;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: String(LIMIT) });
    });
    after(async () => svc?.stop());

    function expect429(res: { status: number; headers: Record<string, unknown>; body: any }) {
      expect(res.status).to.equal(429);
      expect(res.body.error.code).to.equal('RATE_LIMITED');
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).to.be.within(1, 60);
    }

    it('limits registrations per IP', async () => {
      for (let i = 0; i < LIMIT; i++) {
        const res = await callFrom('127.0.0.2', svc.baseUrl, 'POST', '/auth/register', { email: uniqueEmail(`rl${i}`), password: 'long enough pw', name: 'R' });
        expect(res.status, res.text).to.equal(201);
      }
      expect429(await callFrom('127.0.0.2', svc.baseUrl, 'POST', '/auth/register', { email: uniqueEmail('rl'), password: 'long enough pw', name: 'R' }));
      const other = await callFrom('127.0.0.3', svc.baseUrl, 'POST', '/auth/register', { email: uniqueEmail('rl'), password: 'long enough pw', name: 'R' });
      expect(other.status, 'another IP is not limited').to.equal(201);
    });

    it('limits login per IP, whatever the email', async () => {
      for (let i = 0; i < LIMIT; i++) {
        expect((await callFrom('127.0.0.4', svc.baseUrl, 'POST', '/auth/login', { email: uniqueEmail('ip'), password: 'wrong password' })).status).to.equal(401);
      }
      expect429(await callFrom('127.0.0.4', svc.baseUrl, 'POST', '/auth/login', { email: uniqueEmail('ip'), password: 'wrong password' }));
    });

    it('limits login per email, whatever the IP; the right password is refused too while limited', async () => {
      const user = await registerUser(svc.baseUrl);
      for (let i = 0; i < LIMIT; i++) {
        expect((await callFrom(`127.0.1.${i + 1}`, svc.baseUrl, 'POST', '/auth/login', { email: user.email, password: 'wrong password' })).status).to.equal(401);
      }
      expect429(await callFrom('127.0.1.99', svc.baseUrl, 'POST', '/auth/login', { email: user.email.toUpperCase(), password: user.password }));
    });

    it('limits forgot-password per IP and per email', async () => {
      for (let i = 0; i < LIMIT; i++) expect((await callFrom('127.0.0.5', svc.baseUrl, 'POST', '/auth/forgot-password', { email: uniqueEmail('f') })).status).to.equal(200);
      expect429(await callFrom('127.0.0.5', svc.baseUrl, 'POST', '/auth/forgot-password', { email: uniqueEmail('f') }));
      const email = uniqueEmail('per-email');
      for (let i = 0; i < LIMIT; i++) expect((await callFrom(`127.0.2.${i + 1}`, svc.baseUrl, 'POST', '/auth/forgot-password', { email })).status).to.equal(200);
      expect429(await callFrom('127.0.2.99', svc.baseUrl, 'POST', '/auth/forgot-password', { email }));
    });

    it('limits reset-password per IP and per account', async () => {
      for (let i = 0; i < LIMIT; i++) {
        expect((await callFrom('127.0.0.6', svc.baseUrl, 'POST', '/auth/reset-password', { token: `u${i}.${'x'.repeat(43)}`, password: 'long enough pw' })).status).to.equal(400);
      }
      expect429(await callFrom('127.0.0.6', svc.baseUrl, 'POST', '/auth/reset-password', { token: `u9.${'x'.repeat(43)}`, password: 'long enough pw' }));
      for (let i = 0; i < LIMIT; i++) {
        expect((await callFrom(`127.0.3.${i + 1}`, svc.baseUrl, 'POST', '/auth/reset-password', { token: `victim.${'y'.repeat(43)}`, password: 'long enough pw' })).status).to.equal(400);
      }
      expect429(await callFrom('127.0.3.99', svc.baseUrl, 'POST', '/auth/reset-password', { token: `victim.${'z'.repeat(43)}`, password: 'long enough pw' }));
    });
  });
}
