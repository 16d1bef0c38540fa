import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

for (const mode of availableModes()) {
  describe(`runs and the organization's budget (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', OPENAI_API_KEY: 'sk-test-not-used' });
    });
    after(async () => svc?.stop());

    it('answers 402 before a run that would call a paid provider; offline runs stay free', async () => {
      const owner = await registerUser(svc.baseUrl);
      const org = await call(svc.baseUrl, 'POST', '/orgs', { name: `Budget ${mode}` }, owner.auth);
      expect(org.status, org.text).to.equal(201);
      const orgId = org.body.organization.id;
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, owner.auth);
      const auth = { Authorization: `Bearer ${switched.body.token}` };
      expect((await call(svc.baseUrl, 'PUT', `/orgs/${orgId}`, { budgetLimitUsd: 0 }, auth)).status).to.equal(200);

      const flow = (await call(svc.baseUrl, 'POST', '/flows', { name: 'paid' }, auth)).body.flow;
      const paid = await call(svc.baseUrl, 'POST', `/flows/${flow.id}/nodes`, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'openai', model: 'gpt-4o', prompt: 'hi' } }, auth);
      expect(paid.status, paid.text).to.equal(201);
      const head = await svc.services.eventStore.headPosition();
      const refused = await call(svc.baseUrl, 'POST', `/flows/${flow.id}/run`, { inputs: {} }, auth);
      expect(refused.status, refused.text).to.equal(402);
      expect(refused.body.error.code).to.equal('BUDGET_EXCEEDED');
      const node = await call(svc.baseUrl, 'POST', `/flows/${flow.id}/nodes/${paid.body.node.id}/process`, { inputs: {} }, auth);
      expect(node.status).to.equal(402);
      expect(await svc.services.eventStore.headPosition(), 'no run was requested').to.equal(head);

      const free = (await call(svc.baseUrl, 'POST', '/flows', { name: 'free' }, auth)).body.flow;
      await call(svc.baseUrl, 'POST', `/flows/${free.id}/nodes`, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'hi' } }, auth);
      const ran = await call(svc.baseUrl, 'POST', `/flows/${free.id}/run`, { inputs: {} }, auth);
      expect(ran.status, ran.text).to.equal(200);
    });
  });
}
