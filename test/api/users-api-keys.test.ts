import { expect } from 'chai';
import { PERMISSIONS } from '../../domain/shared/permissions.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { TestClock } from '../support/clock.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const fieldsOf = (res: { body: any }) => (res.body.error.details?.fields ?? []).map((f: { field: string }) => f.field);
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

for (const mode of availableModes()) {
  describe(`API keys (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    const clock = new TestClock();
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' }, { clock });
    });
    after(async () => svc?.stop());

    const create = (user: RegisteredUser, body: Record<string, unknown>, auth: Record<string, string> = user.auth) => call(svc.baseUrl, 'POST', '/api-keys', body, auth);

    it('creates a key shown once, usable at once as a bearer credential', async () => {
      const user = await registerUser(svc.baseUrl);
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const res = await create(user, { name: ' CI key ', expiresAt, scopes: ['view_resources', 'view_resources', 'edit_resources'] });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.success).to.equal(true);
      const { apiKey, key } = res.body;
      expect(apiKey).to.deep.include({ name: 'CI key', scopes: ['view_resources', 'edit_resources'], expiresAt });
      expect(apiKey).to.not.have.any.keys('secretHash', 'lastUsedAt', 'secret', 'key');
      expect(key).to.match(new RegExp(`^fsk_${apiKey.id}\\.[A-Za-z0-9_-]{43}$`));
      expect(apiKey.prefix).to.equal(`fsk_${apiKey.id}`);
      expect(key.endsWith(apiKey.lastFour)).to.equal(true);
      const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, bearer(key));
      expect(me.status, me.text).to.equal(200);
      expect(me.body.user.id).to.equal(user.user.id);
    });

    it('gives every permission when no scopes are named', async () => {
      const user = await registerUser(svc.baseUrl);
      const res = await create(user, { name: 'all' });
      expect(res.body.apiKey.scopes).to.deep.equal([...PERMISSIONS]);
      expect(res.body.apiKey.expiresAt).to.equal(null);
    });

    it('lists keys newest first, paginated, never with secrets or hashes', async () => {
      const user = await registerUser(svc.baseUrl);
      const keys: string[] = [];
      for (const name of ['one', 'two', 'three']) {
        keys.push((await create(user, { name })).body.key);
        clock.advance(3);
      }
      const first = await call(svc.baseUrl, 'GET', '/api-keys?limit=2', undefined, user.auth);
      expect(first.status, first.text).to.equal(200);
      expect(first.body.items.map((k: { name: string }) => k.name)).to.deep.equal(['three', 'two']);
      expect(first.body.nextCursor).to.be.a('string');
      const second = await call(svc.baseUrl, 'GET', `/api-keys?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, undefined, user.auth);
      expect(second.body.items.map((k: { name: string }) => k.name)).to.deep.equal(['one']);
      expect(second.body.nextCursor).to.equal(null);
      for (const text of [first.text, second.text]) {
        expect(text).to.not.match(/secretHash|userId/);
        for (const key of keys) expect(text).to.not.contain(key.split('.')[1]);
      }
      expect((await call(svc.baseUrl, 'GET', '/api-keys?limit=0', undefined, user.auth)).status).to.equal(400);
      expect((await call(svc.baseUrl, 'GET', '/api-keys?cursor=garbage', undefined, user.auth)).status).to.equal(400);
    });

    it('revokes a key: the next request with it is 401, it leaves the list, revoking again is 404', async () => {
      const user = await registerUser(svc.baseUrl);
      const created = (await create(user, { name: 'doomed' })).body;
      expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, bearer(created.key))).status).to.equal(200);
      const res = await call(svc.baseUrl, 'DELETE', `/api-keys/${created.apiKey.id}`, undefined, user.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.apiKey.id).to.equal(created.apiKey.id);
      const after = await call(svc.baseUrl, 'GET', '/users/me', undefined, bearer(created.key));
      expect(after.status).to.equal(401);
      const list = await call(svc.baseUrl, 'GET', '/api-keys', undefined, user.auth);
      expect(list.body.items.map((k: { id: string }) => k.id)).to.not.include(created.apiKey.id);
      const again = await call(svc.baseUrl, 'DELETE', `/api-keys/${created.apiKey.id}`, undefined, user.auth);
      expect(again.status).to.equal(404);
      expect(again.body.error.code).to.equal('API_KEY_NOT_FOUND');
    });

    it('a key can revoke itself', async () => {
      const user = await registerUser(svc.baseUrl);
      const created = (await create(user, { name: 'self' })).body;
      expect((await call(svc.baseUrl, 'DELETE', `/api-keys/${created.apiKey.id}`, undefined, bearer(created.key))).status).to.equal(200);
      expect((await call(svc.baseUrl, 'GET', '/api-keys', undefined, bearer(created.key))).status).to.equal(401);
    });

    it("tenant isolation: another user's key is 404 to revoke and absent from their list", async () => {
      const [owner, other] = [await registerUser(svc.baseUrl), await registerUser(svc.baseUrl)];
      const created = (await create(owner, { name: 'mine' })).body;
      const res = await call(svc.baseUrl, 'DELETE', `/api-keys/${created.apiKey.id}`, undefined, other.auth);
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('API_KEY_NOT_FOUND');
      const viaKey = await call(svc.baseUrl, 'DELETE', `/api-keys/${created.apiKey.id}`, undefined, bearer((await create(other, { name: 'theirs' })).body.key));
      expect(viaKey.status).to.equal(404);
      expect((await call(svc.baseUrl, 'GET', '/api-keys', undefined, other.auth)).body.items.map((k: { id: string }) => k.id)).to.not.include(created.apiKey.id);
      expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, bearer(created.key))).status, 'the key still works').to.equal(200);
    });

    it('answers 404 for an unknown key id and 400 for a malformed one', async () => {
      const user = await registerUser(svc.baseUrl);
      expect((await call(svc.baseUrl, 'DELETE', '/api-keys/00000000-0000-0000-0000-000000000000', undefined, user.auth)).status).to.equal(404);
      const bad = await call(svc.baseUrl, 'DELETE', `/api-keys/${encodeURIComponent('bad id!')}`, undefined, user.auth);
      expect(bad.status).to.equal(400);
      expect(fieldsOf(bad)).to.include('params.keyId');
    });

    it('refuses a wrong secret, an unknown key id and a malformed key with 401', async () => {
      const user = await registerUser(svc.baseUrl);
      const created = (await create(user, { name: 'real' })).body;
      for (const key of [`fsk_${created.apiKey.id}.${'A'.repeat(43)}`, `fsk_00000000-0000-0000-0000-000000000000.${created.key.split('.')[1]}`, 'fsk_', `fsk_${created.apiKey.id}.`]) {
        const res = await call(svc.baseUrl, 'GET', '/users/me', undefined, bearer(key));
        expect(res.status, key).to.equal(401);
      }
    });

    it('refuses an expired key with 401', async () => {
      const user = await registerUser(svc.baseUrl);
      const created = (await create(user, { name: 'short-lived', expiresAt: new Date(clock.now().getTime() + 1500).toISOString() })).body;
      expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, bearer(created.key))).status).to.equal(200);
      clock.advance(1700);
      expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, bearer(created.key))).status).to.equal(401);
    });

    it('refuses bad input with 400 naming the field, and a call without credential with 401', async () => {
      const user = await registerUser(svc.baseUrl);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{}, 'body.name'],
        [{ name: '' }, 'body.name'],
        [{ name: 'n'.repeat(101) }, 'body.name'],
        [{ name: 'k', expiresAt: '2020-01-01T00:00:00Z' }, 'body.expiresAt'],
        [{ name: 'k', expiresAt: 'tomorrow' }, 'body.expiresAt'],
        [{ name: 'k', scopes: ['owner'] }, 'body.scopes.0'],
        [{ name: 'k', scopes: [] }, 'body.scopes'],
        [{ name: 'k', secret: 'mine' }, 'body.secret'],
      ];
      for (const [body, field] of cases) {
        const res = await create(user, body);
        expect(res.status, `${field}: ${res.text}`).to.equal(400);
        expect(fieldsOf(res)).to.include(field);
      }
      expect((await call(svc.baseUrl, 'POST', '/api-keys', { name: 'k' })).status).to.equal(401);
      expect((await call(svc.baseUrl, 'GET', '/api-keys')).status).to.equal(401);
      expect((await call(svc.baseUrl, 'DELETE', '/api-keys/whatever')).status).to.equal(401);
    });

    it('a scoped key cannot mint a key with more scopes (403), only within its own', async () => {
      const user = await registerUser(svc.baseUrl);
      const narrow = (await create(user, { name: 'narrow', scopes: ['view_resources'] })).body;
      const wider = await create(user, { name: 'wider', scopes: ['view_resources', 'manage_members'] }, bearer(narrow.key));
      expect(wider.status).to.equal(403);
      expect(wider.body.error.code).to.equal('FORBIDDEN');
      const inherited = await create(user, { name: 'inherited' }, bearer(narrow.key));
      expect(inherited.status).to.equal(201);
      expect(inherited.body.apiKey.scopes).to.deep.equal(['view_resources']);
    });

    it('allows 50 active keys per user, then 409 API_KEY_LIMIT_REACHED until one is revoked', async () => {
      const user = await registerUser(svc.baseUrl);
      let last = '';
      for (let i = 0; i < 50; i++) {
        const res = await create(user, { name: `k${i}` });
        expect(res.status, res.text).to.equal(201);
        last = res.body.apiKey.id;
      }
      const over = await create(user, { name: 'one too many' });
      expect(over.status).to.equal(409);
      expect(over.body.error.code).to.equal('API_KEY_LIMIT_REACHED');
      expect((await call(svc.baseUrl, 'DELETE', `/api-keys/${last}`, undefined, user.auth)).status).to.equal(200);
      expect((await create(user, { name: 'fits again' })).status).to.equal(201);
    });
  });
}
