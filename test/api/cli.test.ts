import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { TestClock } from '../support/clock.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

for (const mode of availableModes()) {
  describe(`CLI device login and CLI tokens (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let bob: RegisteredUser;
    const secretsSeen: string[] = [];

    before(async () => {
      // Generous limits here: the rate limits have their own service below.
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', FRONTEND_URL: 'http://front.test:8080/' });
      alice = await registerUser(svc.baseUrl);
      bob = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    const startLogin = async (body: unknown = {}) => {
      const res = await call(svc.baseUrl, 'POST', '/cli/device/code', body);
      expect(res.status, res.text).to.equal(200);
      secretsSeen.push(res.body.device_code.split('.')[1], res.body.user_code, res.body.user_code.replace('-', ''));
      return res.body as { device_code: string; user_code: string; interval: number; expires_in: number };
    };
    const poll = (deviceCode: string, extra: Record<string, unknown> = {}) => call(svc.baseUrl, 'POST', '/cli/device/token', { device_code: deviceCode, grant_type: GRANT, ...extra });
    const expectRfcError = (res: Awaited<ReturnType<typeof call>>, code: string) => {
      expect(res.status, res.text).to.equal(400);
      expect(res.body).to.deep.include({ success: false });
      expect(res.body.error.code).to.equal(code);
    };

    it('POST /cli/device/code answers the RFC 8628 fields, without authentication', async () => {
      const res = await call(svc.baseUrl, 'POST', '/cli/device/code', { clientName: 'laptop' });
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const b = res.body;
      expect(b.success).to.equal(true);
      expect(b.device_code).to.match(/^[A-Za-z0-9-]+\.[A-Za-z0-9_-]{40,}$/);
      expect(b.user_code).to.match(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      expect(b.verification_uri).to.equal('http://front.test:8080/cli/device');
      expect(b.verification_uri_complete).to.equal(`http://front.test:8080/cli/device?user_code=${b.user_code}`);
      expect(b).to.include({ expires_in: 900, interval: 5 });
      secretsSeen.push(b.device_code.split('.')[1], b.user_code, b.user_code.replace('-', ''));
      // An empty body is fine too; two logins get different codes.
      const other = await startLogin();
      expect(other.user_code).to.not.equal(b.user_code);
    });

    it('POST /cli/device/code refuses unknown fields and overlong names (400 naming the field)', async () => {
      const unknown = await call(svc.baseUrl, 'POST', '/cli/device/code', { colour: 'red' });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.details.fields.map((f: { field: string }) => f.field)).to.include('body.colour');
      const long = await call(svc.baseUrl, 'POST', '/cli/device/code', { clientName: 'x'.repeat(101) });
      expect(long.status).to.equal(400);
      expect(long.body.error.details.fields[0].field).to.equal('body.clientName');
    });

    it('full device login: code → pending → approve → token once → verify and use it', async () => {
      const login = await startLogin({ clientName: 'work laptop' });
      expectRfcError(await poll(login.device_code), 'authorization_pending');

      // Typed by a person: lowercase, without the dash.
      const approve = await call(svc.baseUrl, 'POST', '/cli/device/approve', { user_code: login.user_code.toLowerCase().replace('-', '') }, alice.auth);
      expect(approve.status, approve.text).to.equal(200);
      expect(approve.body).to.deep.equal({ success: true, status: 'approved', clientName: 'work laptop' });

      const granted = await poll(login.device_code);
      expect(granted.status, granted.text).to.equal(200);
      expect(granted.headers.get('cache-control')).to.equal('no-store');
      expect(granted.body).to.include({ success: true, token_type: 'Bearer', expires_in: 90 * 86_400 });
      const token: string = granted.body.access_token;
      expect(token).to.match(/^fcli_[A-Za-z0-9-]+\.[A-Za-z0-9_-]+$/);
      secretsSeen.push(token, token.split('.')[1]);

      expectRfcError(await poll(login.device_code), 'invalid_grant');

      const verify = await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, bearer(token));
      expect(verify.status, verify.text).to.equal(200);
      expect(verify.body).to.include({ success: true, valid: true, userId: alice.user.id, credential: 'cli_token', name: 'work laptop', source: 'device' });
      expect(token).to.include(verify.body.tokenId);
      const days = (Date.parse(verify.body.expiresAt) - Date.now()) / 86_400_000;
      expect(days).to.be.within(89.9, 90.1);

      // A CLI token is a bearer credential like any other.
      const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, bearer(token));
      expect(me.status, me.text).to.equal(200);
      expect(me.body.user.id).to.equal(alice.user.id);
    });

    it('polling faster than the interval → slow_down, with the longer interval', async () => {
      const login = await startLogin();
      expectRfcError(await poll(login.device_code), 'authorization_pending');
      const fast = await poll(login.device_code);
      expectRfcError(fast, 'slow_down');
      expect(fast.body.error.details).to.deep.equal({ interval: 10 });
      const faster = await poll(login.device_code);
      expectRfcError(faster, 'slow_down');
      expect(faster.body.error.details).to.deep.equal({ interval: 15 });
    });

    it('deny path: access_denied for the CLI, and the code cannot be approved afterwards (409)', async () => {
      const login = await startLogin();
      const deny = await call(svc.baseUrl, 'POST', '/cli/device/deny', { user_code: login.user_code }, alice.auth);
      expect(deny.status, deny.text).to.equal(200);
      expect(deny.body).to.include({ success: true, status: 'denied' });
      expectRfcError(await poll(login.device_code), 'access_denied');
      const late = await call(svc.baseUrl, 'POST', '/cli/device/approve', { user_code: login.user_code }, bob.auth);
      expect(late.status).to.equal(409);
      expect(late.body.error.code).to.equal('DEVICE_CODE_ALREADY_DECIDED');
      expectRfcError(await poll(login.device_code), 'access_denied');
    });

    it('approve/deny: 401 without a credential, 404 for an unknown code, 409 when decided, 400 for a malformed code', async () => {
      const login = await startLogin();
      for (const path of ['/cli/device/approve', '/cli/device/deny']) {
        const anonymous = await call(svc.baseUrl, 'POST', path, { user_code: login.user_code });
        expect(anonymous.status).to.equal(401);
        const unknown = await call(svc.baseUrl, 'POST', path, { user_code: 'ZZZZ-ZZZZ' }, alice.auth);
        expect(unknown.status).to.equal(404);
        expect(unknown.body.error.code).to.equal('DEVICE_CODE_NOT_FOUND');
        const malformed = await call(svc.baseUrl, 'POST', path, { user_code: 'ABCD-EFGH' }, alice.auth);
        expect(malformed.status).to.equal(400);
        expect(malformed.body.error.details.fields[0].field).to.equal('body.user_code');
        const missing = await call(svc.baseUrl, 'POST', path, {}, alice.auth);
        expect(missing.status).to.equal(400);
        expect(missing.body.error.details.fields[0].field).to.equal('body.user_code');
      }
      expect((await call(svc.baseUrl, 'POST', '/cli/device/approve', { user_code: login.user_code }, alice.auth)).status).to.equal(200);
      for (const path of ['/cli/device/approve', '/cli/device/deny']) {
        const again = await call(svc.baseUrl, 'POST', path, { user_code: login.user_code }, alice.auth);
        expect(again.status).to.equal(409);
        expect(again.body.error.code).to.equal('DEVICE_CODE_ALREADY_DECIDED');
      }
    });

    it('token endpoint: invalid_grant for malformed, unknown or wrong-secret device codes; unsupported_grant_type; 400 without device_code', async () => {
      const login = await startLogin();
      const [deviceId] = login.device_code.split('.');
      expectRfcError(await poll('not-a-device-code'), 'invalid_grant');
      expectRfcError(await poll(`00000000-0000-0000-0000-000000000000.${'a'.repeat(43)}`), 'invalid_grant');
      expectRfcError(await poll(`${deviceId}.${'a'.repeat(43)}`), 'invalid_grant');
      expectRfcError(await poll(login.device_code, { grant_type: 'authorization_code' }), 'unsupported_grant_type');
      const missing = await call(svc.baseUrl, 'POST', '/cli/device/token', { grant_type: GRANT });
      expect(missing.status).to.equal(400);
      expect(missing.body.error.details.fields[0].field).to.equal('body.device_code');
      // grant_type may be left out; a generic RFC client's client_id and form encoding are accepted.
      expectRfcError(await call(svc.baseUrl, 'POST', '/cli/device/token', { device_code: login.device_code }), 'authorization_pending');
      // (A second login, so that this poll is not too soon after the previous one.)
      const second = await startLogin();
      const form = new URLSearchParams({ device_code: second.device_code, grant_type: GRANT, client_id: 'cli' }).toString();
      expectRfcError(await call(svc.baseUrl, 'POST', '/cli/device/token', form, { 'content-type': 'application/x-www-form-urlencoded' }), 'authorization_pending');
    });

    it('POST /cli/tokens creates a token shown once; verify describes it; validation and 401', async () => {
      const created = await call(svc.baseUrl, 'POST', '/cli/tokens', { name: 'ci', expiresInDays: 7 }, alice.auth);
      expect(created.status, created.text).to.equal(201);
      expect(created.body).to.include({ success: true, name: 'ci' });
      expect(created.body.token).to.match(new RegExp(`^fcli_${created.body.tokenId}\\.[A-Za-z0-9_-]{40,}$`));
      secretsSeen.push(created.body.token, created.body.token.split('.')[1]);
      expect((Date.parse(created.body.expiresAt) - Date.now()) / 86_400_000).to.be.within(6.9, 7.1);

      const verify = await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, bearer(created.body.token));
      expect(verify.status).to.equal(200);
      expect(verify.body).to.include({ valid: true, userId: alice.user.id, credential: 'cli_token', tokenId: created.body.tokenId, expiresAt: created.body.expiresAt, source: 'manual' });

      const byDefault = await call(svc.baseUrl, 'POST', '/cli/tokens', {}, alice.auth);
      expect(byDefault.status).to.equal(201);
      expect(byDefault.body.name).to.equal(null);
      expect((Date.parse(byDefault.body.expiresAt) - Date.now()) / 86_400_000).to.be.within(89.9, 90.1);

      for (const [body, field] of [[{ expiresInDays: 0 }, 'body.expiresInDays'], [{ expiresInDays: 366 }, 'body.expiresInDays'], [{ expiresInDays: 1.5 }, 'body.expiresInDays'], [{ name: '' }, 'body.name'], [{ scope: 'x' }, 'body.scope']] as const) {
        const bad = await call(svc.baseUrl, 'POST', '/cli/tokens', body, alice.auth);
        expect(bad.status, JSON.stringify(body)).to.equal(400);
        expect(bad.body.error.details.fields[0].field).to.equal(field);
      }
      expect((await call(svc.baseUrl, 'POST', '/cli/tokens', {})).status).to.equal(401);
    });

    it('GET /cli/tokens/verify: with a JWT it says so; 401 without or with a bad credential', async () => {
      const jwt = await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, alice.auth);
      expect(jwt.status).to.equal(200);
      expect(jwt.body).to.deep.equal({ success: true, valid: true, userId: alice.user.id, credential: 'jwt' });
      expect((await call(svc.baseUrl, 'GET', '/cli/tokens/verify')).status).to.equal(401);
      expect((await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, bearer('fcli_nope.secret'))).status).to.equal(401);
      const real = await call(svc.baseUrl, 'POST', '/cli/tokens', {}, alice.auth);
      const wrongSecret = `fcli_${real.body.tokenId}.${'x'.repeat(43)}`;
      expect((await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, bearer(wrongSecret))).status).to.equal(401);
    });

    it('DELETE /cli/tokens/{tokenId}: the owner revokes (refused from then on); another user gets 404 (tenant isolation)', async () => {
      const created = await call(svc.baseUrl, 'POST', '/cli/tokens', { name: 'to revoke' }, alice.auth);
      const { token, tokenId } = created.body;
      secretsSeen.push(token);

      const foreign = await call(svc.baseUrl, 'DELETE', `/cli/tokens/${tokenId}`, undefined, bob.auth);
      expect(foreign.status).to.equal(404);
      expect(foreign.body.error.code).to.equal('CLI_TOKEN_NOT_FOUND');
      expect((await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, bearer(token))).status, 'still valid').to.equal(200);

      expect((await call(svc.baseUrl, 'DELETE', `/cli/tokens/${tokenId}`)).status).to.equal(401);
      expect((await call(svc.baseUrl, 'DELETE', '/cli/tokens/00000000-0000-0000-0000-000000000000', undefined, alice.auth)).status).to.equal(404);
      expect((await call(svc.baseUrl, 'DELETE', '/cli/tokens/bad%20id!', undefined, alice.auth)).status).to.equal(400);

      const revoked = await call(svc.baseUrl, 'DELETE', `/cli/tokens/${tokenId}`, undefined, alice.auth);
      expect(revoked.status, revoked.text).to.equal(200);
      expect(revoked.body).to.include({ success: true, tokenId });
      expect(revoked.body.revokedAt).to.be.a('string');
      expect((await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, bearer(token))).status).to.equal(401);
      expect((await call(svc.baseUrl, 'DELETE', `/cli/tokens/${tokenId}`, undefined, alice.auth)).status, 'again: harmless').to.equal(200);
      expect((await call(svc.baseUrl, 'DELETE', `/cli/tokens/${tokenId}`, undefined, bob.auth)).status).to.equal(404);
    });

    it('a scoped API key can neither create a CLI token nor approve a device login (403); an unscoped one can', async () => {
      const scoped = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'read only', scopes: ['view_resources'] }, alice.auth);
      expect(scoped.status, scoped.text).to.equal(201);
      const full = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'full' }, alice.auth);
      expect(full.status, full.text).to.equal(201);
      secretsSeen.push(scoped.body.key, full.body.key);
      const login = await startLogin();
      const create = await call(svc.baseUrl, 'POST', '/cli/tokens', {}, bearer(scoped.body.key));
      expect(create.status, create.text).to.equal(403);
      expect(create.body.error.code).to.equal('FORBIDDEN');
      const approve = await call(svc.baseUrl, 'POST', '/cli/device/approve', { user_code: login.user_code }, bearer(scoped.body.key));
      expect(approve.status, approve.text).to.equal(403);
      expectRfcError(await poll(login.device_code), 'authorization_pending');
      expect((await call(svc.baseUrl, 'POST', '/cli/tokens', {}, bearer(full.body.key))).status).to.equal(201);
      const verify = await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, bearer(full.body.key));
      expect(verify.body).to.include({ valid: true, userId: alice.user.id, credential: 'api_key' });
    });

    it('no user code, device secret or token is stored in clear in the event log', async () => {
      expect(secretsSeen.length).to.be.greaterThan(10);
      const events = await svc.services.eventStore.readAll({ maxCount: 100_000 });
      const log = JSON.stringify(events);
      expect(events.some((e) => e.type === 'CliTokenCreated') && events.some((e) => e.type === 'DeviceAuthorizationRedeemed')).to.equal(true);
      for (const secret of secretsSeen) expect(log.includes(secret), 'a secret in the log').to.equal(false);
    });
  });

  describe(`CLI device login: expiry and rate limits (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    const clock = new TestClock();
    let carol: RegisteredUser;
    const LIMIT = 4;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: String(LIMIT), DEVICE_CODE_TTL_SECONDS: '1', DEVICE_POLL_INTERVAL_SECONDS: '1' }, { clock });
      carol = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    /** Sends until the limit answers; checks that it answers 429 with Retry-After within `limit + 1` calls. */
    async function expectLimited(limit: number, send: () => ReturnType<typeof call>, normal: number[]) {
      for (let i = 1; i <= limit + 1; i++) {
        const res = await send();
        if (res.status === 429) {
          expect(res.body.error.code).to.equal('RATE_LIMITED');
          expect(Number(res.headers.get('retry-after'))).to.be.within(1, 60);
          return i;
        }
        expect(normal, res.text).to.include(res.status);
      }
      return expect.fail(`no 429 after ${limit + 1} calls`);
    }

    it('an expired code: expired_token for the CLI, 410 DEVICE_CODE_EXPIRED on the web', async () => {
      const login = (await call(svc.baseUrl, 'POST', '/cli/device/code', {})).body;
      expect(login.expires_in).to.equal(1);
      clock.advance(1_100);
      const polled = await call(svc.baseUrl, 'POST', '/cli/device/token', { device_code: login.device_code });
      expect(polled.status).to.equal(400);
      expect(polled.body.error.code).to.equal('expired_token');
      const approve = await call(svc.baseUrl, 'POST', '/cli/device/approve', { user_code: login.user_code }, carol.auth);
      expect(approve.status).to.equal(410);
      expect(approve.body.error.code).to.equal('DEVICE_CODE_EXPIRED');
    });

    it('guessing user codes is limited per user and address (429 + Retry-After)', async () => {
      await expectLimited(LIMIT, () => call(svc.baseUrl, 'POST', '/cli/device/approve', { user_code: 'ZZZZ-ZZZZ' }, carol.auth), [404]);
    });

    it('starting logins is limited per address (429 + Retry-After)', async () => {
      await expectLimited(LIMIT, () => call(svc.baseUrl, 'POST', '/cli/device/code', {}), [200]);
    });

    it('polling is limited per address (429 + Retry-After)', async () => {
      await expectLimited(LIMIT * 3, () => call(svc.baseUrl, 'POST', '/cli/device/token', { device_code: 'x.y' }), [400]);
    });

    // Last of the block: moving the clock a day on expires carol's JWT too.
    it('a CLI token is refused once it has expired (401)', async () => {
      const created = await call(svc.baseUrl, 'POST', '/cli/tokens', { name: 'one day', expiresInDays: 1 }, carol.auth);
      expect(created.status, created.text).to.equal(201);
      const token = { Authorization: `Bearer ${created.body.token}` };
      expect((await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, token)).status).to.equal(200);
      clock.advance(86_400_000 + 1_000);
      const expired = await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, token);
      expect(expired.status).to.equal(401);
      expect(expired.body.error.code).to.equal('UNAUTHENTICATED');
    });
  });
}
