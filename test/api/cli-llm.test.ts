import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** A CLI token through the device flow, approved with `auth` (the user's JWT). */
async function cliToken(svc: TestService, auth: Record<string, string>): Promise<string> {
  const code = await call(svc.baseUrl, 'POST', '/cli/device/code', { clientName: 'agent' });
  expect(code.status, code.text).to.equal(200);
  const approve = await call(svc.baseUrl, 'POST', '/cli/device/approve', { user_code: code.body.user_code }, auth);
  expect(approve.status, approve.text).to.equal(200);
  const token = await call(svc.baseUrl, 'POST', '/cli/device/token', { device_code: code.body.device_code, grant_type: GRANT });
  expect(token.status, token.text).to.equal(200);
  return token.body.access_token as string;
}

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'the weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

for (const mode of availableModes()) {
  describe(`CLI LLM proxy in the Anthropic Messages format (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let openai: FakeLlmServer;
    let anthropic: FakeLlmServer;
    let gemini: FakeLlmServer;
    let alice: RegisteredUser;
    let token: string;
    const client = (apiKey = token) => new Anthropic({ apiKey, baseURL: `${svc.baseUrl}/cli/llm`, maxRetries: 0 });

    before(async () => {
      [openai, anthropic, gemini] = await Promise.all([startFakeOpenAi(), startFakeAnthropic(), startFakeGemini()]);
      for (const fake of [openai, anthropic, gemini]) fake.apiKey = 'provider-key';
      svc = await startTestService(mode, {
        RATE_LIMIT_AUTH_PER_MINUTE: '1000',
        OPENAI_API_KEY: 'provider-key',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        ANTHROPIC_API_KEY: 'provider-key',
        ANTHROPIC_BASE_URL: anthropic.url,
        GEMINI_API_KEY: 'provider-key',
        GEMINI_BASE_URL: gemini.url,
        LLM_MAX_RETRIES: '0',
        CLI_LLM_MODEL_MAP: JSON.stringify({
          'claude-offline': { provider: 'offline' },
          'claude-via-openai': { provider: 'openai', model: 'gpt-4o' },
          'claude-via-anthropic': { provider: 'anthropic', model: 'claude-sonnet-4-0' },
          'claude-via-gemini*': { provider: 'google', model: 'gemini-2.0-flash' },
        }),
      });
      alice = await registerUser(svc.baseUrl);
      token = await cliToken(svc, alice.auth);
    });
    after(async () => {
      await svc?.stop();
      await Promise.all([openai, anthropic, gemini].map((f) => f?.close()));
    });

    const routes = [
      { name: 'offline', model: 'claude-offline', fake: () => null as FakeLlmServer | null, text: 'Say hello to the proxy', answer: 'Say hello to the proxy' },
      { name: 'OpenAI wire format', model: 'claude-via-openai', fake: () => openai, text: 'Say hello', answer: 'Hello from the fake.' },
      { name: 'Anthropic wire format', model: 'claude-via-anthropic', fake: () => anthropic, text: 'Say hello', answer: 'Hello from the fake.' },
      { name: 'Gemini wire format', model: 'claude-via-gemini-2', fake: () => gemini, text: 'Say hello', answer: 'Hello from the fake.' },
    ];

    for (const route of routes) {
      describe(`routed to ${route.name}`, () => {
        it('answers a plain message with usage, and records the call without its content', async () => {
          const message = await client().messages.create({ model: route.model, max_tokens: 256, system: 'be brief', messages: [{ role: 'user', content: route.text }] });
          expect(message.type).to.equal('message');
          expect(message.role).to.equal('assistant');
          expect(message.model).to.equal(route.model);
          expect(message.stop_reason).to.equal('end_turn');
          expect(message.content).to.deep.equal([{ type: 'text', text: route.answer }]);
          expect(message.usage.output_tokens).to.be.greaterThan(0);
          expect(message.usage.input_tokens).to.be.greaterThan(0);
          const events = await svc.services.eventStore.readStream(`clillm-${alice.user.id}.${new Date().toISOString().slice(0, 10)}`);
          const recorded = events.map((e) => e.data as any).find((d) => d.requestedModel === route.model && d.stream === false && d.tools === 0);
          expect(recorded, 'the call is in the audit trail').to.not.equal(undefined);
          expect(recorded).to.include({ outcome: 'completed', credential: 'cli_token', content: null, orgId: null });
          expect(JSON.stringify(events.map((e) => e.data))).to.not.include(route.text);
          const fake = route.fake();
          if (fake) expect(JSON.stringify(fake.requests[fake.requests.length - 1].body)).to.include('be brief');
        });

        it('streams the answer as Messages SSE events', async () => {
          const stream = client().messages.stream({ model: route.model, max_tokens: 256, messages: [{ role: 'user', content: route.text }] });
          const pieces: string[] = [];
          stream.on('text', (t: string) => pieces.push(t));
          const message = await stream.finalMessage();
          expect(pieces.join('')).to.equal(route.answer);
          expect(message.content).to.deep.equal([{ type: 'text', text: route.answer }]);
          expect(message.stop_reason).to.equal('end_turn');
          expect(message.usage.output_tokens).to.be.greaterThan(0);
          expect(message.usage.input_tokens).to.be.greaterThan(0);
        });

        it('round-trips a tool call (streamed call, then the tool result)', async () => {
          const fake = route.fake();
          if (fake) fake.toolCall = { name: 'get_weather', input: { city: 'Paris' } };
          try {
            const ask = route.fake() ? 'What is the weather in Paris?' : 'get_weather Paris';
            const first = await client().messages.stream({ model: route.model, max_tokens: 256, tools: [weatherTool], messages: [{ role: 'user', content: ask }] }).finalMessage();
            expect(first.stop_reason).to.equal('tool_use');
            const use = first.content.find((b: Anthropic.ContentBlock) => b.type === 'tool_use');
            expect(use, JSON.stringify(first.content)).to.not.equal(undefined);
            if (use?.type !== 'tool_use') throw new Error('no tool_use');
            expect(use.name).to.equal('get_weather');
            expect(use.input).to.deep.equal({ city: fake ? 'Paris' : ask });
            const second = await client().messages.create({
              model: route.model,
              max_tokens: 256,
              tools: [weatherTool],
              messages: [
                { role: 'user', content: ask },
                { role: 'assistant', content: first.content },
                { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny, 21 °C' }] },
              ],
            });
            expect(second.stop_reason).to.equal('end_turn');
            expect(second.content).to.deep.equal([{ type: 'text', text: fake ? 'Hello from the fake.' : 'Sunny, 21 °C' }]);
            if (fake) {
              // The provider got the call and its result in its own wire format.
              const sent = JSON.stringify(fake.requests[fake.requests.length - 1].body);
              expect(sent).to.include('Sunny, 21 °C');
              expect(sent).to.include('get_weather');
            }
          } finally {
            if (fake) fake.toolCall = null;
          }
        });
      });
    }

    it('accepts the token as Authorization: Bearer too, and answers 401 in Anthropic’s shape for a bad one', async () => {
      const bearer = await call(svc.baseUrl, 'POST', '/cli/llm/messages', { model: 'claude-offline', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, { Authorization: `Bearer ${token}` });
      expect(bearer.status, bearer.text).to.equal(200);
      expect(bearer.body.content[0].text).to.equal('hi');
      try {
        await client('fcli_nope.not-a-real-secret-at-all').messages.create({ model: 'claude-offline', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
        expect.fail('a bad token was accepted');
      } catch (err) {
        expect(err).to.be.instanceOf(Anthropic.AuthenticationError);
        const e = err as InstanceType<typeof Anthropic.AuthenticationError>;
        expect(e.status).to.equal(401);
        expect(e.error).to.deep.include({ type: 'error' });
        expect((e.error as any).error.type).to.equal('authentication_error');
      }
    });

    it('answers 400 and 404 in Anthropic’s shape for bad input and an unrouted model', async () => {
      const bad = await call(svc.baseUrl, 'POST', '/cli/llm/messages', { model: 'claude-offline', messages: [] }, { 'x-api-key': token });
      expect(bad.status).to.equal(400);
      expect(bad.body.type).to.equal('error');
      expect(bad.body.error.type).to.equal('invalid_request_error');
      expect(bad.body.error.message).to.include('max_tokens');
      const unrouted = await call(svc.baseUrl, 'POST', '/cli/llm/messages', { model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, { 'x-api-key': token });
      expect(unrouted.status).to.equal(404);
      expect(unrouted.body.error.type).to.equal('not_found_error');
    });

    it('answers 402 billing_error before a paid call when the organization is over budget; logs prompts when the organization says so', async () => {
      const owner = await registerUser(svc.baseUrl);
      const org = await call(svc.baseUrl, 'POST', '/orgs', { name: `CLI LLM ${mode}` }, owner.auth);
      expect(org.status, org.text).to.equal(201);
      const orgId = org.body.organization?.id ?? org.body.org?.id ?? org.body.id;
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, owner.auth);
      expect(switched.status, switched.text).to.equal(200);
      const auth = { Authorization: `Bearer ${switched.body.token}` };
      const settings = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/cli-llm-settings`, { logPrompts: true, modelMap: { 'team-model': { provider: 'anthropic', model: 'claude-sonnet-4-0' } } }, auth);
      expect(settings.status, settings.text).to.equal(200);
      const orgToken = await cliToken(svc, auth);

      // Within budget (no limit yet): the organization's map routes the name, and the prompt is logged.
      const paid = await client(orgToken).messages.create({ model: 'team-model', max_tokens: 20, messages: [{ role: 'user', content: 'org secret question' }] });
      expect(paid.content).to.deep.equal([{ type: 'text', text: 'Hello from the fake.' }]);
      const ownerId = owner.user.id;
      const events = await svc.services.eventStore.readStream(`clillm-${ownerId}.${new Date().toISOString().slice(0, 10)}`);
      const logged = events.map((e) => e.data as any).find((d) => d.requestedModel === 'team-model');
      expect(logged).to.deep.include({ orgId, routedBy: 'organization', provider: 'anthropic' });
      expect(logged.content).to.deep.equal({ prompt: 'org secret question', answer: 'Hello from the fake.' });
      expect(logged.costUsd).to.be.greaterThan(0);
      const budget = await call(svc.baseUrl, 'GET', `/orgs/${orgId}/budget`, undefined, auth);
      expect(budget.body.spentUsd).to.be.closeTo(logged.costUsd, 1e-9);

      expect((await call(svc.baseUrl, 'PUT', `/orgs/${orgId}`, { budgetLimitUsd: 0 }, auth)).status).to.equal(200);
      const before = anthropic.requests.length;
      try {
        await client(orgToken).messages.create({ model: 'team-model', max_tokens: 20, messages: [{ role: 'user', content: 'again' }] });
        expect.fail('an over-budget organization was served');
      } catch (err) {
        expect(err).to.be.instanceOf(Anthropic.APIError);
        const e = err as InstanceType<typeof Anthropic.APIError>;
        expect(e.status).to.equal(402);
        expect((e.error as any).type).to.equal('error');
        expect((e.error as any).error.type).to.equal('billing_error');
        expect((e.error as any).error.message).to.include('BUDGET_EXCEEDED');
      }
      expect(anthropic.requests.length, 'no provider call').to.equal(before);
      // The offline provider stays usable over budget.
      const dry = await client(orgToken).messages.create({ model: 'offline/any', max_tokens: 20, messages: [{ role: 'user', content: 'dry run' }] });
      expect(dry.content).to.deep.equal([{ type: 'text', text: 'dry run' }]);
    });
  });
}
