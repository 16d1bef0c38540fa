import { expect } from 'chai';
import { userStreamId } from '../../domain/users/index.js';
import { call } from '../support/http.js';
import { login, mailsTo, registerUser, verificationTokenFor, verifyEmailOf } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
let counter = 0;
const victimEmail = () => `victim-${Date.now().toString(36)}-${++counter}@example.test`;

/**
 * Account pre-hijacking (issue 37 item 6): an attacker registers the victim's address with a
 * password of their own; the link mailed to the victim must not turn that account into a verified
 * one the attacker still controls.
 */
for (const mode of availableModes()) {
  describe(`pre-hijacking defence (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;

    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    });
    after(async () => svc?.stop());

    const dataDir = () => svc.services.config.DATA_DIR;
    const verify = (body: Record<string, unknown>) => call(svc.baseUrl, 'POST', '/auth/verify-email', body);
    const me = (auth: Record<string, string>) => call(svc.baseUrl, 'GET', '/users/me', undefined, auth);

    /** The attacker's account on the victim's address, with an API key and a CLI token of theirs. */
    async function preRegister() {
      const email = victimEmail();
      const attacker = await registerUser(svc.baseUrl, { email, password: 'the attacker password' });
      const key = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'backdoor' }, attacker.auth);
      expect(key.status, key.text).to.equal(201);
      const cli = await call(svc.baseUrl, 'POST', '/cli/tokens', { name: 'backdoor' }, attacker.auth);
      expect(cli.status, cli.text).to.equal(201);
      return { email, attacker, key: bearer(key.body.key), cli: bearer(cli.body.token) };
    }

    it('the link alone does not verify an account with a password: 403 PASSWORD_REQUIRED; the right password does', async () => {
      const { email, attacker } = await preRegister();
      const token = verificationTokenFor(dataDir(), email)!;
      for (const body of [{ token }, { token, password: 'a guess at the password' }]) {
        const res = await verify(body);
        expect(res.status, res.text).to.equal(403);
        expect(res.body.error.code).to.equal('PASSWORD_REQUIRED');
        expect(res.body.error.details).to.deep.include({ field: 'body.password', startOver: true });
      }
      expect((await me(attacker.auth)).body.user.emailVerified).to.equal(false);
      // A bad token still says only that the token is bad.
      const bad = await verify({ token: `${attacker.user.id}.${'A'.repeat(43)}` });
      expect(bad.body.error.code).to.equal('INVALID_VERIFICATION_TOKEN');
      const both = await verify({ token, password: 'x', startOver: { name: 'Victim', password: 'victim password 123' } });
      expect(both.status).to.equal(400);
      expect(both.body.error.code).to.equal('VALIDATION_FAILED');
      expect(both.body.error.details.fields.map((f: { field: string }) => f.field)).to.include('body.startOver');

      const ok = await verify({ token, password: 'the attacker password' });
      expect(ok.status, ok.text).to.equal(200);
      expect((await me(attacker.auth)).body.user.emailVerified).to.equal(true);
    });

    it('start over: the pre-registered account is disowned (sessions, API keys, CLI tokens die) and the address goes to a new, verified account', async () => {
      const { email, attacker, key, cli } = await preRegister();
      const token = verificationTokenFor(dataDir(), email)!;
      const res = await verify({ token, startOver: { name: 'The Victim', password: 'victim password 123' } });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ success: true, startedOver: true, email });
      expect(res.body.user.id).to.not.equal(attacker.user.id);

      const mine = await me(bearer(res.body.token));
      expect(mine.status, mine.text).to.equal(200);
      expect(mine.body.user).to.include({ id: res.body.user.id, email, name: 'The Victim', emailVerified: true });
      for (const [what, auth] of [['session', attacker.auth], ['API key', key], ['CLI token', cli]] as const) {
        expect((await me(auth)).status, what).to.equal(401);
      }
      expect((await login(svc.baseUrl, email, 'the attacker password')).status).to.equal(401);
      const victim = await login(svc.baseUrl, email, 'victim password 123');
      expect(victim.status).to.equal(200);
      expect(victim.body.user.id).to.equal(res.body.user.id);

      const events = await svc.services.eventStore.readStream(userStreamId(attacker.user.id));
      expect(events.at(-1)!.type).to.equal('UnverifiedAccountDisowned');
      expect(events.at(-1)!.data).to.include({ email, via: 'email_verification' });
      // Single use: the link cannot disown or verify anything again.
      expect((await verify({ token, startOver: { name: 'Again', password: 'another password 1' } })).body.error.code).to.equal('INVALID_VERIFICATION_TOKEN');
    });

    it('an account that proved an address before cannot be disowned: 409 START_OVER_NOT_ALLOWED', async () => {
      const user = await registerUser(svc.baseUrl);
      await verifyEmailOf(svc.baseUrl, dataDir(), user.email, user.password);
      const next = victimEmail();
      expect((await call(svc.baseUrl, 'PUT', '/users/me', { email: next }, user.auth)).status).to.equal(200);
      const token = verificationTokenFor(dataDir(), next)!;
      const res = await verify({ token, startOver: { name: 'Someone', password: 'someone password 1' } });
      expect(res.status, res.text).to.equal(409);
      expect(res.body.error.code).to.equal('START_OVER_NOT_ALLOWED');
      expect((await verify({ token })).body.error.code).to.equal('PASSWORD_REQUIRED');
      expect((await verify({ token, password: user.password })).status).to.equal(200);
    });

    it('a password reset of a never-verified account starts over too', async () => {
      const { email, attacker, key } = await preRegister();
      expect((await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email })).status).to.equal(200);
      const mail = await waitUntil('the reset mail', async () => mailsTo(dataDir(), email).find((m) => m.subject === 'Reset your password') ?? null);
      const token = decodeURIComponent(/reset-password\?token=(\S+)/.exec(mail.text)![1]);
      const res = await call(svc.baseUrl, 'POST', '/auth/reset-password', { token, password: 'victim reset password' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ success: true, startedOver: true });
      expect((await me(key)).status, 'the attacker API key').to.equal(401);
      expect((await me(attacker.auth)).status, 'the attacker session').to.equal(401);
      const victim = await login(svc.baseUrl, email, 'victim reset password');
      expect(victim.status).to.equal(200);
      expect(victim.body.user.id).to.not.equal(attacker.user.id);
      expect((await me(victim.auth!)).body.user).to.include({ email, emailVerified: true });
      const events = await svc.services.eventStore.readStream(userStreamId(attacker.user.id));
      expect(events.at(-1)!.data).to.include({ via: 'password_reset' });
    });
  });
}
