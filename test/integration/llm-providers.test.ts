import { expect } from 'chai';
import { createOrg, expectError, fields } from '../api/orgs-support.js';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

/**
 * The LLM routes over real HTTP, with the service's provider base URLs pointed at local servers
 * that speak each wire format: the service-wide keys, an organization's own key, the budget gate,
 * and each way a provider can fail.
 */

const ENV_KEYS = { openai: 'sk-env-openai-0001', anthropic: 'sk-ant-env-0002', google: 'gm-env-0003' };
const ORG_KEY = 'sk-org-openai-0004';

for (const mode of availableModes()) {
  describe(`LLM routes over real HTTP (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let openai: FakeLlmServer;
    let orgOpenAi: FakeLlmServer;
    let anthropic: FakeLlmServer;
    let gemini: FakeLlmServer;
    let user: RegisteredUser;
    const fakes = () => [openai, orgOpenAi, anthropic, gemini];

    before(async () => {
      [openai, orgOpenAi, anthropic, gemini] = await Promise.all([startFakeOpenAi(), startFakeOpenAi(), startFakeAnthropic(), startFakeGemini()]);
      svc = await startTestService(mode, {
        OPENAI_API_KEY: ENV_KEYS.openai,
        OPENAI_BASE_URL: `${openai.url}/v1`,
        ANTHROPIC_API_KEY: ENV_KEYS.anthropic,
        ANTHROPIC_BASE_URL: anthropic.url,
        GEMINI_API_KEY: ENV_KEYS.google,
        GEMINI_BASE_URL: gemini.url,
        LLM_MAX_RETRIES: '1',
        LLM_TIMEOUT_MS: '1500',
        // One model added to the table, so the route accepts it and prices it.
        LLM_PRICES: JSON.stringify({ openai: { 'gpt-custom': { input: 1e-6, output: 1e-6 } } }),
        RATE_LIMIT_AUTH_PER_MINUTE: '1000',
      });
      user = await registerUser(svc.baseUrl);
    });
    beforeEach(() => {
      for (const fake of fakes()) fake.reset();
      openai.apiKey = ENV_KEYS.openai;
      anthropic.apiKey = ENV_KEYS.anthropic;
      gemini.apiKey = ENV_KEYS.google;
      orgOpenAi.apiKey = ORG_KEY;
    });
    after(async () => {
      await svc?.stop();
      await Promise.all(fakes().map((f) => f?.close()));
    });

    const process = (body: unknown, auth = user.auth) => call(svc.baseUrl, 'POST', '/llm/process', body, auth);

    it('answers 401 without credentials on every LLM route', async () => {
      expectError(await call(svc.baseUrl, 'GET', '/llm/providers'), 401);
      expectError(await call(svc.baseUrl, 'GET', '/llm/models'), 401);
      expectError(await call(svc.baseUrl, 'POST', '/llm/process', { provider: 'offline', model: 'x', prompt: 'hi' }), 401);
      expectError(await call(svc.baseUrl, 'GET', '/llm/providers', undefined, { Authorization: 'Bearer nope' }), 401);
    });

    it('documents the three operations in the OpenAPI document', async () => {
      const doc = (await call(svc.baseUrl, 'GET', '/openapi.json')).body;
      expect(doc.paths['/llm/providers'].get.operationId).to.equal('listLlmProviders');
      expect(doc.paths['/llm/models'].get.operationId).to.equal('listLlmModels');
      expect(doc.paths['/llm/process'].post.responses).to.include.keys('200', '400', '401', '402', '502');
    });

    it('lists providers and which are configured for the caller', async () => {
      const res = await call(svc.baseUrl, 'GET', '/llm/providers', undefined, user.auth);
      expect(res.status, res.text).to.equal(200);
      const byId = Object.fromEntries(res.body.providers.map((p: { id: string }) => [p.id, p]));
      expect(Object.keys(byId)).to.deep.equal(['openai', 'anthropic', 'google', 'openai_compatible', 'offline']);
      expect(byId.openai).to.include({ configured: true, source: 'environment', anyModel: false, name: 'OpenAI' });
      expect(byId.openai.models).to.include.members(['gpt-4o', 'gpt-custom']);
      expect(byId.anthropic).to.include({ configured: true, source: 'environment' });
      expect(byId.google).to.include({ configured: true, source: 'environment' });
      expect(byId.openai_compatible).to.include({ configured: false, source: null, anyModel: true });
      expect(byId.offline).to.include({ configured: true, source: 'builtin', anyModel: true });
      expect(res.body.problem).to.equal(null);
      expect(res.text, 'keys never answered').to.not.include(ENV_KEYS.openai);
    });

    it("lists models from each provider's list endpoint, else from the price table, saying which", async () => {
      gemini.modelsFail = true;
      const res = await call(svc.baseUrl, 'GET', '/llm/models', undefined, user.auth);
      expect(res.status, res.text).to.equal(200);
      const byId = Object.fromEntries(res.body.providers.map((p: { id: string }) => [p.id, p]));
      expect(byId.openai).to.deep.include({ source: 'provider', configured: true, models: [...openai.models].sort() });
      expect(openai.requestsTo('/v1/models')[0].headers.authorization).to.equal(`Bearer ${ENV_KEYS.openai}`);
      expect(byId.anthropic).to.deep.include({ source: 'provider', models: [...anthropic.models].sort() });
      expect(anthropic.requestsTo('/v1/models')[0].headers['x-api-key']).to.equal(ENV_KEYS.anthropic);
      expect(byId.google.source).to.equal('price_table');
      expect(byId.google.models).to.include('gemini-2.0-flash');
      expect(byId.google.error).to.match(/google answered 500/);
      expect(byId.openai_compatible).to.deep.include({ source: 'price_table', configured: false, models: [], anyModel: true });
      expect(byId.offline).to.deep.include({ source: 'builtin', models: ['offline'] });

      const only = await call(svc.baseUrl, 'GET', '/llm/models?provider=anthropic', undefined, user.auth);
      expect(only.body.providers.map((p: { id: string }) => p.id)).to.deep.equal(['anthropic']);
      expect(fields(await call(svc.baseUrl, 'GET', '/llm/models?provider=mistral', undefined, user.auth))).to.include('query.provider');
    });

    it('processes text with OpenAI: usage from the answer, cached tokens at the cached rate', async () => {
      const res = await process({ provider: 'openai', model: 'gpt-4o', prompt: 'Say hello.', system: 'Be terse.', temperature: 0.3, maxTokens: 50 });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ success: true, output: 'Hello from the fake.', provider: 'openai', model: 'gpt-4o-2024-08-06', finishReason: 'stop', priced: true });
      expect(res.body.usage).to.deep.equal({ total_tokens: 1200, prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 400, cache_write_tokens: 0, cost: 0.004 });
      expect(res.body.executionTime).to.be.a('number').and.at.least(0);
      const [req] = openai.requestsTo('/chat/completions');
      expect(req.headers.authorization).to.equal(`Bearer ${ENV_KEYS.openai}`);
      expect(req.body).to.deep.include({ model: 'gpt-4o', temperature: 0.3, max_completion_tokens: 50 });
      expect(req.body.messages).to.deep.equal([
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Say hello.' },
      ]);
    });

    it('processes text with Anthropic (separate cache counters) and Gemini', async () => {
      const claude = await process({ provider: 'anthropic', model: 'claude-sonnet-4-0', prompt: 'Hi' });
      expect(claude.status, claude.text).to.equal(200);
      expect(claude.body.usage).to.deep.equal({ total_tokens: 1050, prompt_tokens: 1000, completion_tokens: 50, cached_tokens: 700, cache_write_tokens: 200, cost: 0.00201 });
      const [req] = anthropic.requestsTo('/v1/messages');
      expect(req.headers).to.include({ 'x-api-key': ENV_KEYS.anthropic, 'anthropic-version': '2023-06-01' });

      const gem = await process({ provider: 'google', model: 'gemini-2.0-flash', prompt: 'Hi' });
      expect(gem.status, gem.text).to.equal(200);
      expect(gem.body).to.deep.include({ provider: 'google', output: 'Hello from the fake.' });
      expect(gem.body.usage).to.deep.equal({ total_tokens: 150, prompt_tokens: 120, completion_tokens: 30, cached_tokens: 20, cache_write_tokens: 0, cost: 0.0000225 });
      expect(gemini.requests[0].headers['x-goog-api-key']).to.equal(ENV_KEYS.google);
    });

    it('prices a model that LLM_PRICES added', async () => {
      const res = await process({ provider: 'openai', model: 'gpt-custom', prompt: 'Hi' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.usage.cost).to.equal(0.0012); // 1200 tokens at 1e-6
    });

    it('processes with the offline provider: the prompt back, words as tokens, no network, no cost', async () => {
      const res = await process({ provider: 'offline', model: 'any-name/at:all', prompt: 'Summarise  this\nplease', system: 'ignored here' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ success: true, output: 'Summarise  this\nplease', provider: 'offline', model: 'any-name/at:all' });
      expect(res.body.usage).to.deep.equal({ total_tokens: 6, prompt_tokens: 3, completion_tokens: 3, cached_tokens: 0, cache_write_tokens: 0, cost: 0 });
      for (const fake of fakes()) expect(fake.requests, 'no provider called').to.have.length(0);
    });

    it('refuses unknown providers, unknown models and bad fields with 400 naming the field', async () => {
      expect(fields(await process({ provider: 'mistral', model: 'x', prompt: 'hi' }))).to.include('body.provider');
      const model = await process({ provider: 'openai', model: 'gpt-99', prompt: 'hi' });
      expectError(model, 400, 'UNKNOWN_MODEL');
      expect(fields(model)).to.deep.equal(['body.model']);
      expect(model.body.error.details.known).to.include('gpt-4o');
      expect(fields(await process({ provider: 'openai', model: 'gpt-4o', prompt: '' }))).to.include('body.prompt');
      expect(fields(await process({ provider: 'openai', model: 'gpt-4o', prompt: 'x', temperature: 3 }))).to.include('body.temperature');
      expect(fields(await process({ provider: 'openai', model: 'gpt-4o', prompt: 'x', maxTokens: 0 }))).to.include('body.maxTokens');
      expect(fields(await process({ provider: 'openai', model: 'gpt-4o', prompt: 'x', stream: true }))).to.include('body.stream');
      expect(openai.requests).to.have.length(0);
    });

    it('answers 400 PROVIDER_NOT_CONFIGURED for a provider without credentials, never an offline answer', async () => {
      const res = await process({ provider: 'openai_compatible', model: 'llama3.1:8b', prompt: 'hi' });
      expectError(res, 400, 'PROVIDER_NOT_CONFIGURED');
      expect(res.body.error.details).to.deep.equal({ provider: 'openai_compatible' });
    });

    it('answers 502 with the provider error code when the provider fails after retries', async () => {
      openai.failures = [{ status: 500 }, { status: 500 }];
      const failed = await process({ provider: 'openai', model: 'gpt-4o', prompt: 'hi' });
      expectError(failed, 502, 'PROVIDER_ERROR');
      expect(failed.body.error.details).to.deep.equal({ provider: 'openai', status: 500 });
      expect(openai.requests, 'LLM_MAX_RETRIES=1: two attempts').to.have.length(2);

      anthropic.failures = [{ status: 429, retryAfter: '0.1' }, { status: 429, retryAfter: '7' }];
      const limited = await process({ provider: 'anthropic', model: 'claude-3-5-haiku-latest', prompt: 'hi' });
      expectError(limited, 502, 'PROVIDER_RATE_LIMITED');
      expect(limited.body.error.details).to.deep.equal({ provider: 'anthropic', status: 429, retryAfter: 7 });
      expect(limited.headers.get('retry-after')).to.equal('7');

      gemini.malformed = true;
      expectError(await process({ provider: 'google', model: 'gemini-1.5-flash', prompt: 'hi' }), 502, 'PROVIDER_BAD_RESPONSE');

      openai.reset();
      openai.apiKey = ENV_KEYS.openai;
      openai.delayMs = 2_500;
      const started = Date.now();
      expectError(await process({ provider: 'openai', model: 'gpt-4o', prompt: 'hi' }), 502, 'PROVIDER_TIMEOUT');
      expect(Date.now() - started, 'LLM_TIMEOUT_MS=1500 bounds the call').to.be.below(2_400);
    });

    describe('in an organization', () => {
      let orgAuth: { Authorization: string };
      let orgId: string;

      before(async () => {
        orgId = (await createOrg(svc, user)).org.id;
        const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, user.auth);
        expect(switched.status, switched.text).to.equal(200);
        orgAuth = { Authorization: `Bearer ${switched.body.token}` };
        const put = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/llm-credentials`, { provider: 'openai', apiKey: ORG_KEY, baseUrl: `${orgOpenAi.url}/v1` }, orgAuth);
        expect(put.status, put.text).to.equal(200);
      });

      it("uses the organization's own key and base URL, and the service's keys for the rest", async () => {
        const providers = await call(svc.baseUrl, 'GET', '/llm/providers', undefined, orgAuth);
        const byId = Object.fromEntries(providers.body.providers.map((p: { id: string }) => [p.id, p]));
        expect(byId.openai).to.include({ configured: true, source: 'organization' });
        expect(byId.anthropic).to.include({ configured: true, source: 'environment' });
        const res = await process({ provider: 'openai', model: 'gpt-4o-mini', prompt: 'hi' }, orgAuth);
        expect(res.status, res.text).to.equal(200);
        expect(openai.requests, 'the service-wide endpoint is not used').to.have.length(0);
        expect(orgOpenAi.requests[0].headers.authorization).to.equal(`Bearer ${ORG_KEY}`);
      });

      it('records the spend of each paid call, and answers 402 BUDGET_EXCEEDED before any provider call once over budget', async () => {
        const budgetOf = async () => (await call(svc.baseUrl, 'GET', `/orgs/${orgId}/budget`, undefined, orgAuth)).body;
        const before = (await budgetOf()).spentUsd as number;
        const limit = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}`, { budgetLimitUsd: before + 0.003 }, orgAuth);
        expect(limit.status, limit.text).to.equal(200);

        const paid = await process({ provider: 'openai', model: 'gpt-4o', prompt: 'hi' }, orgAuth);
        expect(paid.status, paid.text).to.equal(200);
        expect(paid.body.usage.cost).to.equal(0.004);
        const after = await budgetOf();
        expect(after.spentUsd).to.be.closeTo(before + 0.004, 1e-9);

        orgOpenAi.reset();
        orgOpenAi.apiKey = ORG_KEY;
        const refused = await process({ provider: 'openai', model: 'gpt-4o', prompt: 'hi' }, orgAuth);
        expectError(refused, 402, 'BUDGET_EXCEEDED');
        expect(refused.body.error.details).to.include({ limitUsd: before + 0.003 });
        expectError(await process({ provider: 'anthropic', model: 'claude-sonnet-4-0', prompt: 'hi' }, orgAuth), 402, 'BUDGET_EXCEEDED');
        expect(orgOpenAi.requests.length + anthropic.requests.length, 'no provider was called').to.equal(0);

        // Free dry runs stay possible; the personal workspace has no organization budget.
        expect((await process({ provider: 'offline', model: 'dry-run', prompt: 'hi' }, orgAuth)).status).to.equal(200);
        expect((await process({ provider: 'openai', model: 'gpt-4o', prompt: 'hi' }, user.auth)).status).to.equal(200);

        await call(svc.baseUrl, 'PUT', `/orgs/${orgId}`, { budgetLimitUsd: null }, orgAuth);
        expect((await process({ provider: 'openai', model: 'gpt-4o', prompt: 'hi' }, orgAuth)).status, 'no limit, no gate').to.equal(200);
      });

      it('does not charge the organization for free calls, nor another organization for this one', async () => {
        const other = await registerUser(svc.baseUrl);
        const otherOrg = (await createOrg(svc, other)).org.id;
        const spentBefore = (await call(svc.baseUrl, 'GET', `/orgs/${orgId}/budget`, undefined, orgAuth)).body.spentUsd;
        await process({ provider: 'offline', model: 'x', prompt: 'one two' }, orgAuth);
        expect((await call(svc.baseUrl, 'GET', `/orgs/${orgId}/budget`, undefined, orgAuth)).body.spentUsd).to.equal(spentBefore);
        expect((await call(svc.baseUrl, 'GET', `/orgs/${otherOrg}/budget`, undefined, other.auth)).body.spentUsd).to.equal(0);
      });
    });
  });
}
