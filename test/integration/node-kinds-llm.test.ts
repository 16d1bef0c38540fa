import { expect } from 'chai';
import { nodeKindsFor, type ExecutionContext, type NodeKindPorts } from '../../consumers/runs-kinds/index.js';
import { spendPeriodOf, spendStreamId } from '../../domain/orgs/spend.js';
import { effectiveNodeData, type RunNode } from '../../domain/runs/index.js';
import { loadConfig } from '../../infra/config/index.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { createLlmRegistry } from '../../infra/llm/registry.js';
import { systemClock } from '../../ports/clock.js';
import { isLlmAbort, LlmProviderError } from '../../ports/llm.js';
import { openAiSnapshot, startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';

/** The llm kind through the registry against the OpenAI wire-format fake on loopback. */

function servicesFor(fake: FakeLlmServer, eventStore?: SqliteEventStore): NodeKindPorts {
  const config = loadConfig({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, LLM_MAX_RETRIES: '0', LLM_TIMEOUT_MS: '2000' });
  const llm = createLlmRegistry({ config, credentials: { organization: async () => [], user: async () => [] } });
  return { llm, settings: config, clock: systemClock, eventStore } as unknown as NodeKindPorts;
}

function context(signal = new AbortController().signal): ExecutionContext {
  return { processId: 'p1', flowId: 'f1', orgId: null, signal, inputs: { topic: 'otters' }, previous: 'earlier text', nodes: {}, variables: { tone: 'dry' }, input: 'earlier text' };
}

const llmNode = (data: Record<string, unknown>): RunNode => ({ id: 'n1', data: { nodeType: 'llm', llm: 'openai', model: 'gpt-4o', ...data } as RunNode['data'] });

describe('llm node kind against the OpenAI fake', () => {
  let fake: FakeLlmServer;
  before(async () => {
    fake = await startFakeOpenAi();
    fake.apiKey = 'sk-test';
  });
  after(() => fake.close());
  beforeEach(() => {
    fake.requests.length = 0;
    fake.failures = [];
    fake.delayMs = 0;
    fake.text = 'Otters hold hands.';
  });

  it('sends the rendered prompt and system message, outputs the text with usage and metadata', async () => {
    const kinds = nodeKindsFor(servicesFor(fake));
    const node = llmNode({ prompt: 'Tell me about {{inputs.topic}} after: {{previous}}', agentObjective: 'Be {{variables.tone}}.', temperature: 0.3, maxTokens: 50 });
    const result = await kinds.llm.execute(node, context());
    expect(result.output).to.equal('Otters hold hands.');
    expect(result.usage).to.deep.include({ total_tokens: 1200, prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 400 });
    expect(result.usage!.cost).to.be.greaterThan(0);
    expect(result.metadata).to.deep.equal({ provider: 'openai', model: openAiSnapshot('gpt-4o'), finishReason: 'stop' });
    const body = fake.requests[0].body;
    expect(body.messages).to.deep.equal([
      { role: 'system', content: 'Be dry.' },
      { role: 'user', content: 'Tell me about otters after: earlier text' },
    ]);
    expect(body.temperature).to.equal(0.3);
    expect(body.model).to.equal('gpt-4o');
  });

  it('applies overrideConfig through effectiveNodeData', async () => {
    const kinds = nodeKindsFor(servicesFor(fake));
    const node = llmNode({ prompt: 'hi', temperature: 0.9 });
    const data = effectiveNodeData(node, { mode: 'node', nodeId: 'n1', overrideConfig: { model: 'gpt-4o-mini', temperature: 0 } });
    const result = await kinds.llm.execute({ ...node, data }, context());
    expect(fake.requests[0].body.model).to.equal('gpt-4o-mini');
    expect(fake.requests[0].body.temperature).to.equal(0);
    expect((result.metadata as { model: string }).model).to.equal(openAiSnapshot('gpt-4o-mini'));
  });

  it("propagates the provider's failure as LlmProviderError", async () => {
    fake.failures = [{ status: 500 }];
    const kinds = nodeKindsFor(servicesFor(fake));
    try {
      await kinds.llm.execute(llmNode({ prompt: 'hi' }), context());
      expect.fail('should have failed');
    } catch (err) {
      expect(err).to.be.instanceOf(LlmProviderError);
      expect((err as LlmProviderError).code).to.equal('PROVIDER_ERROR');
    }
  });

  it('a stop aborts the in-flight call with an LlmAbortError', async () => {
    fake.delayMs = 1_500;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const err = await nodeKindsFor(servicesFor(fake))
      .llm.execute(llmNode({ prompt: 'hi' }), context(controller.signal))
      .then(() => null, (e: unknown) => e);
    expect(isLlmAbort(err)).to.equal(true);
    expect(Date.now() - started).to.be.below(1_000);
  });

  it('an organization over its budget gets BUDGET_EXCEEDED (payment_required) before any provider call', async () => {
    // The budget is decided on the log: the org stream's limit and this month's spend stream.
    const store = new SqliteEventStore(':memory:');
    const metadata = { actorId: null, orgId: 'o1', workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: new Date().toISOString() };
    const at = new Date().toISOString();
    await store.append('org-o1', [
      { id: 'e1', type: 'OrganizationCreated', data: { orgId: 'o1', name: 'O', description: '', createdBy: 'u1', createdAt: at }, metadata },
      { id: 'e2', type: 'OrganizationUpdated', data: { budgetLimitUsd: 1, updatedBy: 'u1', at }, metadata },
    ], 'no_stream');
    await store.append(spendStreamId('o1', spendPeriodOf(at)), [{ id: 'e3', type: 'LlmSpendRecorded', data: { orgId: 'o1', amountUsd: 2, runId: null, spendId: null, at }, metadata }], 'no_stream');
    const services = servicesFor(fake, store);
    const orgContext: ExecutionContext = { ...context(), orgId: 'o1' };
    const err = await nodeKindsFor(services)
      .llm.execute(llmNode({ prompt: 'hi' }), orgContext)
      .then(() => null, (e: unknown) => e as { code: string; status: number });
    expect(err).to.include({ code: 'BUDGET_EXCEEDED', kind: 'payment_required' });
    expect(fake.requests).to.have.length(0);
  });

  it('a provider without credentials fails with PROVIDER_NOT_CONFIGURED, never a fake answer', async () => {
    const err = await nodeKindsFor(servicesFor(fake))
      .llm.execute(llmNode({ llm: 'anthropic', model: 'claude-3-5-haiku-latest', prompt: 'hi' }), context())
      .then(() => null, (e: unknown) => e);
    expect((err as LlmProviderError).code).to.equal('PROVIDER_NOT_CONFIGURED');
  });
});
