import { expect } from 'chai';
import { FakeLlmServer, type CapturedRequest, type WireFormat } from '../support/fake-llm/index.js';
import { openAiWire } from '../support/fake-llm/openai.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { bearer, createOrg } from './orgs-support.js';
import { expectError, flowClient } from './flows-support.js';

/** A flow as a model would propose it: input → summarize (llm) → check (condition) → alert | done. */
const validFlow = (overrides: { model?: string; extraEdges?: unknown[] } = {}) => ({
  name: 'Triage support mail',
  description: 'Summarizes a mail and alerts on urgent ones',
  nodes: [
    { id: 'input', type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'input', startNode: true, inputKey: 'mail' } },
    { id: 'summarize', type: 'custom', position: { x: 250, y: 0 }, data: { nodeType: 'llm', llm: 'openai', model: overrides.model ?? 'gpt-4o', prompt: 'Summarize: {{previous}}' } },
    { id: 'check', type: 'custom', position: { x: 500, y: 0 }, data: { nodeType: 'condition', conditions: [{ operator: 'contains', value: 'urgent', targetNodeId: 'alert' }] } },
    { id: 'alert', type: 'custom', position: { x: 750, y: -100 }, data: { nodeType: 'output', outputKey: 'alert' } },
    { id: 'done', type: 'custom', position: { x: 750, y: 100 }, data: { nodeType: 'output' } },
  ],
  edges: [
    { id: 'e1', source: 'input', target: 'summarize' },
    { id: 'e2', source: 'summarize', target: 'check' },
    { id: 'e3', source: 'check', target: 'alert' },
    { id: 'e4', source: 'check', target: 'done' },
    ...(overrides.extraEdges ?? []),
  ],
});
const withCycle = () => validFlow({ extraEdges: [{ id: 'back', source: 'done', target: 'summarize' }] });
const fenced = (value: unknown) => `Here is your flow:\n\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\`\n`;

/** The OpenAI fake, answering the scripted texts one per chat request (then its default text). */
async function scriptedOpenAi() {
  const answers: string[] = [];
  const format: WireFormat = {
    ...openAiWire,
    async handle(req, res, fake) {
      if (req.path === '/v1/chat/completions' && answers.length > 0) fake.text = answers.shift()!;
      return openAiWire.handle.call(openAiWire, req, res, fake);
    },
  };
  const fake = await new FakeLlmServer(format).start();
  return { fake, answers };
}

const chats = (fake: FakeLlmServer) => fake.requestsTo('/chat/completions');
const lastUserMessage = (req: CapturedRequest) => (req.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'user').at(-1)!.content;

for (const mode of availableModes()) {
  describe(`AI flow generation API (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let bare: TestService;
    let fake: FakeLlmServer;
    let answers: string[];
    let owner: RegisteredUser;
    const client = flowClient(() => svc);
    const generate = (user: { auth: Record<string, string> }, body: unknown) => call(svc.baseUrl, 'POST', '/ai/generate-flow', body, user.auth);

    before(async () => {
      ({ fake, answers } = await scriptedOpenAi());
      svc = await startTestService(mode, { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, LLM_MAX_RETRIES: '0', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      bare = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      owner = await registerUser(svc.baseUrl);
    });
    beforeEach(() => {
      fake.reset();
      answers.length = 0;
    });
    after(async () => {
      await svc?.stop();
      await bare?.stop();
      await fake?.close();
    });

    it('a valid flow on the first answer → 201, created with its nodes and edges', async () => {
      answers.push(JSON.stringify(validFlow()));
      const res = await generate(owner, { description: 'Summarize incoming support mail and alert me when it is urgent' });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ success: true, attempts: 1, provider: 'openai', model: 'gpt-4o' });
      expect(res.body.usage).to.deep.equal({ total_tokens: 1200, prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 400, cost: res.body.usage.cost });
      expect(res.body.usage.cost).to.be.greaterThan(0);
      expect(res.headers.get('etag')).to.equal(`"${res.body.flow.version}"`);

      const flow = await client.getFlow(owner, res.body.flow.id);
      expect(flow.name).to.equal('Triage support mail');
      expect(flow.ownerId).to.equal(owner.user.id);
      expect(flow.nodes.map((n: { id: string }) => n.id)).to.deep.equal(['input', 'summarize', 'check', 'alert', 'done']);
      expect(flow.nodes[1]).to.deep.include({ type: 'custom', position: { x: 250, y: 0 } });
      expect(flow.nodes[1].data).to.include({ nodeType: 'llm', llm: 'openai', model: 'gpt-4o' });
      expect(flow.edges.map((e: { source: string; target: string }) => `${e.source}>${e.target}`)).to.deep.equal(['input>summarize', 'summarize>check', 'check>alert', 'check>done']);

      // One call, with the schema built from the node-type catalogue and the models llm nodes may name.
      expect(chats(fake)).to.have.length(1);
      const system = chats(fake)[0].body.messages[0];
      expect(system.role).to.equal('system');
      for (const text of ['"const":"condition"', '"const":"webhook"', 'claude-sonnet-4-0', 'gemini-2.0-flash', 'Use llm "openai" with model "gpt-4o"']) expect(system.content).to.include(text);
      expect(lastUserMessage(chats(fake)[0])).to.include('alert me when it is urgent');
    });

    it('the request name wins over the proposal; a fenced ```json answer is read', async () => {
      answers.push(fenced(validFlow()));
      const res = await generate(owner, { description: 'triage mail', name: 'My own name', model: 'gpt-4o-mini' });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.flow.name).to.equal('My own name');
      expect(res.body.model).to.equal('gpt-4o-mini');
      expect(chats(fake)[0].body.model).to.equal('gpt-4o-mini');
    });

    const retried: Array<[string, () => string, string[]]> = [
      ['a cycle', () => JSON.stringify(withCycle()), ['CYCLE', 'summarize → check → done → summarize']],
      ['an unknown model', () => JSON.stringify(validFlow({ model: 'gpt-9-ultra' })), ['nodes.1.data.model', 'unknown model for openai']],
      ['malformed JSON', () => '{"name": "half a flow", "nodes": [', ['MALFORMED_JSON']],
    ];
    for (const [what, answer, expected] of retried) {
      it(`${what}, then a valid answer → 201 after 2 attempts; the retry carries the problems`, async () => {
        answers.push(answer(), fenced(validFlow()));
        const res = await generate(owner, { description: 'triage mail' });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.attempts).to.equal(2);
        expect(res.body.usage.total_tokens).to.equal(2400);
        expect(res.body.flow.nodes).to.have.length(5);
        const [first, second] = chats(fake);
        expect(chats(fake)).to.have.length(2);
        expect(lastUserMessage(first)).to.not.include('refused');
        const feedback = lastUserMessage(second);
        expect(feedback).to.include('refused by the validator');
        for (const text of expected) expect(feedback).to.include(text);
        // The refused answer goes back as the model's own turn.
        expect(second.body.messages.at(-2)).to.deep.equal({ role: 'assistant', content: answer() });
      });
    }

    it('two invalid answers → 422 GENERATED_FLOW_INVALID with the problems, and no flow is created', async () => {
      const user = await registerUser(svc.baseUrl);
      answers.push(JSON.stringify(withCycle()), JSON.stringify(validFlow({ extraEdges: [{ id: 'e1', source: 'alert', target: 'alert' }] })));
      const res = await client.refusedWithoutEvents(() => generate(user, { description: 'triage mail' }), 422, 'GENERATED_FLOW_INVALID');
      expect(res.body.error.details.attempts).to.equal(2);
      const codes = res.body.error.details.problems.map((p: { code?: string }) => p.code);
      expect(codes).to.include('SELF_LOOP');
      expect(res.body.error.details.problems.map((p: { message: string }) => p.message).join('\n')).to.include('duplicate edge id e1');
      expect(chats(fake)).to.have.length(2);
      const list = await client.as(user, 'GET', '/flows');
      expect(list.body.items).to.deep.equal([]);
    });

    it('the offline provider → 400 OFFLINE_PROVIDER_CANNOT_DESIGN, without calling anything', async () => {
      const res = await client.refusedWithoutEvents(() => generate(owner, { description: 'triage mail', provider: 'offline' }), 400, 'OFFLINE_PROVIDER_CANNOT_DESIGN');
      expect(res.body.error.message).to.include('cannot design flows');
      expect(chats(fake)).to.have.length(0);
    });

    it('no provider configured → 400 PROVIDER_NOT_CONFIGURED (by default and when named); unknown model → 400', async () => {
      const user = await registerUser(bare.baseUrl);
      const res = await call(bare.baseUrl, 'POST', '/ai/generate-flow', { description: 'triage mail' }, user.auth);
      expectError(res, 400, 'PROVIDER_NOT_CONFIGURED');
      expectError(await generate(owner, { description: 'triage mail', provider: 'anthropic' }), 400, 'PROVIDER_NOT_CONFIGURED');
      expectError(await generate(owner, { description: 'triage mail', model: 'gpt-9-ultra' }), 400, 'UNKNOWN_MODEL', 'body.model');
      expect(chats(fake)).to.have.length(0);
    });

    it('a failing provider → 502 with its code, nothing created', async () => {
      fake.failures = [{ status: 500 }];
      await client.refusedWithoutEvents(() => generate(owner, { description: 'triage mail' }), 502, 'PROVIDER_ERROR');
    });

    it('401 without credentials; 400 for an empty, too long or unknown field', async () => {
      expectError(await call(svc.baseUrl, 'POST', '/ai/generate-flow', { description: 'x' }), 401);
      expectError(await generate(owner, { description: '   ' }), 400, 'VALIDATION_FAILED', 'body.description');
      expectError(await generate(owner, {}), 400, 'VALIDATION_FAILED', 'body.description');
      expectError(await generate(owner, { description: 'x'.repeat(4001) }), 400, 'VALIDATION_FAILED', 'body.description');
      expectError(await generate(owner, { description: 'x', bogus: true }), 400, 'VALIDATION_FAILED');
      expectError(await generate(owner, { description: 'x', provider: 'skynet' }), 400, 'VALIDATION_FAILED', 'body.provider');
      expect(chats(fake)).to.have.length(0);
    });

    it('in an organization: the flow belongs to it, spend is recorded, and another user cannot see the flow', async () => {
      const { org } = await createOrg(svc, owner);
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, owner.auth);
      expect(switched.status, switched.text).to.equal(200);
      const inOrg = { auth: bearer(switched.body.token) };
      answers.push(JSON.stringify(validFlow()));
      const res = await generate(inOrg, { description: 'triage mail' });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.flow.orgId).to.equal(org.id);
      const budget = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/budget`, undefined, inOrg.auth);
      expect(budget.status, budget.text).to.equal(200);
      expect(JSON.stringify(budget.body)).to.include(String(res.body.usage.cost));
      // Over its budget now: refused before any provider call.
      const limited = await call(svc.baseUrl, 'PUT', `/orgs/${org.id}`, { budgetLimitUsd: 0.001 }, inOrg.auth);
      expect(limited.status, limited.text).to.equal(200);
      fake.reset();
      await client.refusedWithoutEvents(() => generate(inOrg, { description: 'triage mail' }), 402, 'BUDGET_EXCEEDED');
      expect(chats(fake)).to.have.length(0);
      const stranger = await registerUser(svc.baseUrl);
      expectError(await client.as(stranger, 'GET', `/flows/${res.body.flow.id}`), 404, 'FLOW_NOT_FOUND');
    });
  });
}
