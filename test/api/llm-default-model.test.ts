import { expect } from 'chai';
import { startFakeAnthropic, startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { bearer, createOrg } from './orgs-support.js';

/**
 * Issue 36: with a provider configured, the contexts that answer without a named model (the
 * assistant, the web extension) answer with the first configured provider, as flow generation
 * and the app builder do; the organization or the variable may say otherwise; offline only when
 * nothing is configured. The providers are fakes speaking the real wire formats on loopback.
 */

const lastUserText = (body: any): string => JSON.stringify(body?.messages ?? body);

for (const mode of availableModes()) {
  describe(`the default model with providers configured (${mode})`, function () {
    this.timeout(120_000);
    let openai: FakeLlmServer;
    let anthropic: FakeLlmServer;
    const started: TestService[] = [];
    const serve = async (env: Record<string, string>) => {
      const svc = await startTestService(mode, { LLM_MAX_RETRIES: '0', ...env });
      started.push(svc);
      return { svc, user: await registerUser(svc.baseUrl) };
    };
    const anthropicEnv = () => ({ ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: anthropic.url });
    const openAiEnv = () => ({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
    const ask = async (svc: TestService, user: RegisteredUser, content: string) => {
      const conversation = await call(svc.baseUrl, 'POST', '/assistant/conversations', {}, user.auth);
      expect(conversation.status, conversation.text).to.equal(201);
      const sent = await call(svc.baseUrl, 'POST', `/assistant/conversations/${conversation.body.conversation.id}/messages`, { content }, user.auth);
      expect(sent.status, sent.text).to.equal(200);
      return sent.body.reply;
    };

    before(async () => {
      [openai, anthropic] = await Promise.all([startFakeOpenAi(), startFakeAnthropic()]);
    });
    beforeEach(() => {
      openai.reset();
      anthropic.reset();
    });
    after(async () => {
      for (const svc of started) await svc.stop();
      await Promise.all([openai?.close(), anthropic?.close()]);
    });

    it('only Anthropic configured: the assistant and the extension answer with it, not the offline echo', async () => {
      const { svc, user } = await serve(anthropicEnv());
      anthropic.text = 'Claude says hi.';
      const reply = await ask(svc, user, 'who answers?');
      expect(reply).to.include({ status: 'completed', content: 'Claude says hi.', provider: 'anthropic', model: 'claude-sonnet-4-0' });
      expect(anthropic.requests.some((r) => r.path === '/v1/messages' && r.body.model === 'claude-sonnet-4-0' && lastUserText(r.body).includes('who answers?'))).to.equal(true);

      const models = await call(svc.baseUrl, 'GET', '/extension/models', undefined, user.auth);
      expect(models.status, models.text).to.equal(200);
      expect(models.body.default).to.deep.equal({ provider: 'anthropic', model: 'claude-sonnet-4-0' });
      const answered = await call(svc.baseUrl, 'POST', '/extension/ai', { prompt: 'what is this page?' }, user.auth);
      expect(answered.status, answered.text).to.equal(200);
      expect(answered.body).to.deep.include({ output: 'Claude says hi.', model: { provider: 'anthropic', model: 'claude-sonnet-4-0' } });
      expect(openai.requests).to.have.length(0);
    });

    it('OpenAI and Anthropic configured: OpenAI, the first of the order flow generation uses; the variable and the organization may say otherwise', async () => {
      const { svc, user } = await serve({ ...openAiEnv(), ...anthropicEnv() });
      openai.text = 'GPT says hi.';
      expect(await ask(svc, user, 'who answers?')).to.include({ content: 'GPT says hi.', provider: 'openai', model: 'gpt-4o' });
      expect(openai.requests.some((r) => r.path === '/v1/chat/completions' && r.body.model === 'gpt-4o')).to.equal(true);
      openai.reset();
      openai.text = 'GPT says hi.';
      const answered = await call(svc.baseUrl, 'POST', '/extension/ai', { prompt: 'hello' }, user.auth);
      expect(answered.body.output).to.equal('GPT says hi.');
      // OpenAI answers with the snapshot it ran (gpt-4o-2024-08-06), and the answer passes it on.
      expect(answered.body.model.provider).to.equal('openai');
      expect(answered.body.model.model).to.match(/^gpt-4o/);
      expect(openai.requests.map((r) => r.body.model)).to.deep.equal(['gpt-4o']);
      expect(anthropic.requests).to.have.length(0);

      // The organization says otherwise for its members' extension.
      const { org } = await createOrg(svc, user);
      const inOrg = bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, user.auth)).body.token);
      const put = await call(svc.baseUrl, 'PUT', '/extension/settings', { defaultModel: 'anthropic:claude-3-5-haiku-latest', allowedModels: null }, inOrg);
      expect(put.status, put.text).to.equal(200);
      anthropic.text = 'Haiku here.';
      const inOrgAnswer = await call(svc.baseUrl, 'POST', '/extension/ai', { prompt: 'hello' }, inOrg);
      expect(inOrgAnswer.body).to.deep.include({ output: 'Haiku here.', model: { provider: 'anthropic', model: 'claude-3-5-haiku-latest' } });

      // The variables say otherwise: ASSISTANT_PROVIDER and EXTENSION_DEFAULT_MODEL name the offline provider, and the answer says so.
      const named = await serve({ ...openAiEnv(), ASSISTANT_PROVIDER: 'offline', EXTENSION_DEFAULT_MODEL: 'offline:offline' });
      openai.reset();
      expect(await ask(named.svc, named.user, 'echo me')).to.include({ content: 'echo me', provider: 'offline', model: 'offline' });
      const echoed = await call(named.svc.baseUrl, 'POST', '/extension/ai', { prompt: 'echo me too' }, named.user.auth);
      expect(echoed.body.model).to.deep.equal({ provider: 'offline', model: 'offline' });
      expect(openai.requests).to.have.length(0);
    });

    it('nothing configured: offline, and the answer says so', async () => {
      const { svc, user } = await serve({});
      expect(await ask(svc, user, 'echo')).to.include({ content: 'echo', provider: 'offline', model: 'offline' });
      const answered = await call(svc.baseUrl, 'POST', '/extension/ai', { prompt: 'echo' }, user.auth);
      expect(answered.body).to.deep.include({ output: 'echo', model: { provider: 'offline', model: 'offline' } });
    });
  });
}
