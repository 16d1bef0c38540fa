import { expect } from 'chai';
import { createOrg, expectError, fields } from './orgs-support.js';
import { startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

/**
 * A user's own LLM provider keys over real HTTP: set, read masked, remove, the 400s and 401s;
 * then the registry's order against a local OpenAI wire-format server: the user's key in the
 * personal workspace over the service's, the organization's key in the organization's workspace.
 */

const ENV_KEY = 'sk-env-openai-9999';
const USER_KEY = 'sk-user-openai-1234567890abcdef';
const ORG_KEY = 'sk-org-openai-fedcba0987654321';
const ANTHROPIC_USER_KEY = 'sk-ant-user-13579246801357';

for (const mode of availableModes()) {
  describe(`own LLM credentials on the profile (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let openai: FakeLlmServer;
    let user: RegisteredUser;
    let other: RegisteredUser;
    const path = '/users/me/llm-credentials';
    const put = (body: unknown, auth = user.auth) => call(svc.baseUrl, 'PUT', path, body, auth);
    const get = (auth = user.auth) => call(svc.baseUrl, 'GET', path, undefined, auth);
    const providersOf = async (auth: { Authorization: string }) => {
      const res = await call(svc.baseUrl, 'GET', '/llm/providers', undefined, auth);
      expect(res.status, res.text).to.equal(200);
      return Object.fromEntries(res.body.providers.map((p: { id: string }) => [p.id, p])) as Record<string, { configured: boolean; source: string | null }>;
    };

    before(async () => {
      openai = await startFakeOpenAi();
      svc = await startTestService(mode, {
        OPENAI_API_KEY: ENV_KEY,
        OPENAI_BASE_URL: `${openai.url}/v1`,
        ANTHROPIC_API_KEY: '',
        LLM_MAX_RETRIES: '0',
        RATE_LIMIT_AUTH_PER_MINUTE: '1000',
      });
      [user, other] = await Promise.all([registerUser(svc.baseUrl), registerUser(svc.baseUrl)]);
    });
    beforeEach(() => openai.reset());
    after(async () => {
      await svc?.stop();
      await openai?.close();
    });

    it('answers 401 without valid credentials', async () => {
      expectError(await call(svc.baseUrl, 'GET', path), 401);
      expectError(await call(svc.baseUrl, 'PUT', path, { provider: 'openai', apiKey: USER_KEY }), 401);
      expectError(await call(svc.baseUrl, 'GET', path, undefined, { Authorization: 'Bearer nope' }), 401);
      expectError(await call(svc.baseUrl, 'PUT', path, { provider: 'openai', apiKey: USER_KEY }, { Authorization: 'Bearer nope' }), 401);
    });

    it('documents both operations in the OpenAPI document', async () => {
      const doc = (await call(svc.baseUrl, 'GET', '/openapi.json')).body;
      expect(doc.paths[path].get.operationId).to.equal('getMyLlmCredentials');
      expect(doc.paths[path].put.operationId).to.equal('setMyLlmCredential');
    });

    it('starts empty', async () => {
      const res = await get(other.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, credentials: [] });
    });

    it('sets a key and answers it masked, never in clear', async () => {
      const res = await put({ provider: 'openai', apiKey: USER_KEY });
      expect(res.status, res.text).to.equal(200);
      expect(res.text).not.to.include(USER_KEY);
      expect(res.body.credentials).to.have.length(1);
      expect(res.body.credentials[0]).to.include({ provider: 'openai', apiKeyMasked: 'sk-u••••cdef', baseUrl: null });
      expect(Date.parse(res.body.credentials[0].updatedAt)).to.be.a('number').and.not.NaN;
      const read = await get();
      expect(read.status, read.text).to.equal(200);
      expect(read.body.credentials).to.deep.equal(res.body.credentials);
      expect(read.text).not.to.include(USER_KEY);
    });

    it("keeps each user's credentials to that user", async () => {
      expect((await get(other.auth)).body.credentials).to.deep.equal([]);
      expect((await providersOf(other.auth)).openai.source).to.equal('environment');
    });

    it('sets an OpenAI-compatible server with its base URL, and removes it with apiKey null', async () => {
      const set = await put({ provider: 'openai_compatible', apiKey: 'local-key-abcdefgh', baseUrl: 'http://127.0.0.1:9/v1' });
      expect(set.status, set.text).to.equal(200);
      expect(set.body.credentials.map((c: { provider: string }) => c.provider)).to.deep.equal(['openai', 'openai_compatible']);
      expect(set.body.credentials[1]).to.include({ baseUrl: 'http://127.0.0.1:9/v1' });
      const removed = await put({ provider: 'openai_compatible', apiKey: null });
      expect(removed.status, removed.text).to.equal(200);
      expect(removed.body.credentials.map((c: { provider: string }) => c.provider)).to.deep.equal(['openai']);
      const again = await put({ provider: 'openai_compatible', apiKey: null });
      expect(again.status, 'removing what is not there is harmless').to.equal(200);
      expect((await get()).body.credentials.map((c: { provider: string }) => c.provider)).to.deep.equal(['openai']);
    });

    it('answers 400 naming the field for bad input', async () => {
      const unknown = await put({ provider: 'mistral', apiKey: 'x-123456789' });
      expectError(unknown, 400, 'VALIDATION_FAILED');
      expect(fields(unknown)).to.include('body.provider');
      const noBase = await put({ provider: 'openai_compatible', apiKey: 'x-123456789' });
      expectError(noBase, 400, 'VALIDATION_FAILED');
      expect(fields(noBase)).to.include('body.baseUrl');
      const badBase = await put({ provider: 'openai', apiKey: 'x-123456789', baseUrl: 'ftp://example.com' });
      expectError(badBase, 400, 'VALIDATION_FAILED');
      expect(fields(badBase)).to.include('body.baseUrl');
      const extra = await put({ provider: 'openai', apiKey: 'x-123456789', secret: true });
      expectError(extra, 400, 'VALIDATION_FAILED');
      expect(fields(extra).join(' ')).to.include('secret');
      const missing = await put({ provider: 'openai' });
      expectError(missing, 400, 'VALIDATION_FAILED');
      expect(fields(missing)).to.include('body.apiKey');
      expect((await get()).body.credentials.map((c: { provider: string }) => c.provider), 'nothing changed').to.deep.equal(['openai']);
    });

    it("uses the user's own key in the personal workspace instead of the service's", async () => {
      openai.apiKey = USER_KEY;
      const providers = await providersOf(user.auth);
      expect(providers.openai).to.include({ configured: true, source: 'user' });
      expect(providers.anthropic).to.include({ configured: false, source: null });
      const res = await call(svc.baseUrl, 'POST', '/llm/process', { provider: 'openai', model: 'gpt-4o-mini', prompt: 'hi' }, user.auth);
      expect(res.status, res.text).to.equal(200);
      expect(openai.requests).to.have.length(1);
      expect(openai.requests[0].headers.authorization).to.equal(`Bearer ${USER_KEY}`);
      // The other user still spends the service's key.
      openai.apiKey = ENV_KEY;
      const theirs = await call(svc.baseUrl, 'POST', '/llm/process', { provider: 'openai', model: 'gpt-4o-mini', prompt: 'hi' }, other.auth);
      expect(theirs.status, theirs.text).to.equal(200);
      expect(openai.requests[1].headers.authorization).to.equal(`Bearer ${ENV_KEY}`);
    });

    it("shows a provider as configured when only the user has a key for it", async () => {
      expect((await providersOf(user.auth)).anthropic.configured).to.equal(false);
      const set = await put({ provider: 'anthropic', apiKey: ANTHROPIC_USER_KEY });
      expect(set.status, set.text).to.equal(200);
      expect((await providersOf(user.auth)).anthropic).to.include({ configured: true, source: 'user' });
    });

    it("in an organization's workspace the organization's key wins and the user's own keys are not used", async () => {
      const orgId = (await createOrg(svc, user)).org.id;
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, user.auth);
      expect(switched.status, switched.text).to.equal(200);
      const orgAuth = { Authorization: `Bearer ${switched.body.token}` };
      const orgPut = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/llm-credentials`, { provider: 'openai', apiKey: ORG_KEY }, orgAuth);
      expect(orgPut.status, orgPut.text).to.equal(200);
      const providers = await providersOf(orgAuth);
      expect(providers.openai).to.include({ configured: true, source: 'organization' });
      expect(providers.anthropic, "the user's anthropic key stays personal").to.include({ configured: false });
      openai.apiKey = ORG_KEY;
      const res = await call(svc.baseUrl, 'POST', '/llm/process', { provider: 'openai', model: 'gpt-4o-mini', prompt: 'hi' }, orgAuth);
      expect(res.status, res.text).to.equal(200);
      expect(openai.requests[0].headers.authorization).to.equal(`Bearer ${ORG_KEY}`);
      // The profile routes still show the user's own keys, whichever workspace is active.
      expect((await get(orgAuth)).body.credentials.map((c: { provider: string }) => c.provider)).to.deep.equal(['anthropic', 'openai']);
    });

    it("goes back to the service's key as soon as the user removes their own", async () => {
      const third = await registerUser(svc.baseUrl);
      const viaOpenAi = (auth: { Authorization: string }) => call(svc.baseUrl, 'POST', '/llm/process', { provider: 'openai', model: 'gpt-4o-mini', prompt: 'hi' }, auth);
      openai.apiKey = ENV_KEY;
      expect((await viaOpenAi(third.auth)).status).to.equal(200);
      expect((await put({ provider: 'openai', apiKey: USER_KEY }, third.auth)).status).to.equal(200);
      openai.apiKey = USER_KEY;
      expect((await viaOpenAi(third.auth)).status).to.equal(200);
      expect((await put({ provider: 'openai', apiKey: null }, third.auth)).status).to.equal(200);
      openai.apiKey = ENV_KEY;
      const after = await viaOpenAi(third.auth);
      expect(after.status, after.text).to.equal(200);
      expect(openai.requests.map((r) => r.headers.authorization)).to.deep.equal([`Bearer ${ENV_KEY}`, `Bearer ${USER_KEY}`, `Bearer ${ENV_KEY}`]);
    });

    it('keeps no key in clear in the event store', async () => {
      const events = JSON.stringify(await svc.services.eventStore.readAll({ maxCount: 100_000 }));
      expect(events).to.include('UserLlmCredentialSet');
      for (const secret of [USER_KEY, ANTHROPIC_USER_KEY, 'local-key-abcdefgh', ORG_KEY]) expect(events.includes(secret), secret).to.equal(false);
    });
  });
}
