import { expect } from 'chai';
import { startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

/** An agent in an organization with a monthly LLM budget: 402 before a turn once it is spent; a turn that spends it ends with finishReason `budget`. */
for (const mode of availableModes()) {
  describe(`agents and the organization's budget (${mode}, OpenAI wire format)`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let fake: FakeLlmServer;
    before(async () => {
      fake = await startFakeOpenAi();
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, LLM_MAX_RETRIES: '0' });
    });
    after(async () => {
      await svc?.stop();
      await fake?.close();
    });

    it('spends each step against the budget, ends the turn with `budget` once it is spent, then answers 402 BUDGET_EXCEEDED', async () => {
      const owner = await registerUser(svc.baseUrl);
      const orgId = (await call(svc.baseUrl, 'POST', '/orgs', { name: `Agents budget ${mode}` }, owner.auth)).body.organization.id;
      const auth = { Authorization: `Bearer ${(await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, owner.auth)).body.token}` };
      // Each fake gpt-4o call costs $0.004: two calls pass, the third is refused.
      expect((await call(svc.baseUrl, 'PUT', `/orgs/${orgId}`, { budgetLimitUsd: 0.006 }, auth)).status).to.equal(200);
      const agent = (await call(svc.baseUrl, 'POST', '/agents', { name: 'paid', provider: 'openai', model: 'gpt-4o', tools: [{ kind: 'memory' }] }, auth)).body.agent;
      const session = (await call(svc.baseUrl, 'POST', `/agents/${agent.id}/sessions`, {}, auth)).body.session;
      fake.toolCalls = [{ name: 'memory_search', input: { query: 'x' } }];
      fake.toolRounds = 100;
      const sent = await call(svc.baseUrl, 'POST', `/agents/${agent.id}/sessions/${session.id}/messages`, { content: 'go' }, auth);
      expect(sent.status, sent.text).to.equal(200);
      expect(sent.body.message.answer).to.include({ finishReason: 'budget', iterations: 2 });
      expect(sent.body.message.answer.cost).to.be.closeTo(0.008, 1e-9);
      const refused = await call(svc.baseUrl, 'POST', `/agents/${agent.id}/sessions/${session.id}/messages`, { content: 'again' }, auth);
      expect(refused.status, refused.text).to.equal(402);
      expect(refused.body.error.code).to.equal('BUDGET_EXCEEDED');
      // Refused before the turn: the session is not left busy.
      expect((await call(svc.baseUrl, 'GET', `/agents/${agent.id}/sessions/${session.id}`, undefined, auth)).body.session.running).to.equal(null);
    });
  });
}
