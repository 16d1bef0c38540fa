import { expect } from 'chai';
import { answerPromptCondition, DEFAULT_NODE_KIND, nodeKindFor, nodeKindsFor, type ExecutionContext, type NodeKindPorts } from '../../consumers/runs-kinds/index.js';
import { NODE_TYPES } from '../../domain/flows/node-data.js';
import type { RunNode } from '../../domain/runs/index.js';
import { loadConfig } from '../../infra/config/index.js';
import { outboundHttp } from '../../infra/http/outbound.js';
import { createLlmRegistry } from '../../infra/llm/registry.js';
import { systemClock } from '../../ports/clock.js';
import { startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';

/** Dispatch of node kinds, the offline llm kind, and usePrompt conditions. */

/** Personal callers only (no budget, so no event store); nobody has stored credentials. */
function portsWith(env: Record<string, string> = {}): NodeKindPorts {
  const config = loadConfig({ LLM_MAX_RETRIES: '0', ...env });
  const llm = createLlmRegistry({ config, credentials: { organization: async () => [], user: async () => [] } });
  return { llm, outbound: outboundHttp, settings: config, clock: systemClock } as unknown as NodeKindPorts;
}

function context(extra: Partial<ExecutionContext> = {}): ExecutionContext {
  return { processId: 'p1', flowId: 'f1', orgId: null, signal: new AbortController().signal, inputs: { name: 'Ada' }, previous: 'before', nodes: {}, variables: {}, input: 'before', ...extra };
}
const node = (data: Record<string, unknown>): RunNode => ({ id: 'n', data: data as RunNode['data'] });

describe('nodeKindsFor', () => {
  const kinds = nodeKindsFor(portsWith());

  it('has a kind for every node type, each under its own name, and a default', () => {
    for (const type of NODE_TYPES) expect(kinds[type]?.type, type).to.equal(type);
    expect(kinds[DEFAULT_NODE_KIND]).to.be.an('object');
  });

  it('dispatches by data.nodeType, and falls back by the data for an absent or unknown one', async () => {
    expect(nodeKindFor(kinds, node({ nodeType: 'transform', template: 'x' }))).to.equal(kinds.transform);
    expect(nodeKindFor(kinds, node({}))).to.equal(kinds[DEFAULT_NODE_KIND]);
    expect(nodeKindFor(kinds, node({ nodeType: 'something_new' }))).to.equal(kinds[DEFAULT_NODE_KIND]);
    expect(nodeKindFor(kinds, node({ nodeType: DEFAULT_NODE_KIND }))).to.equal(kinds[DEFAULT_NODE_KIND]);
    // A seed-style node with `llm` set behaves as an llm node.
    const seed = await kinds[DEFAULT_NODE_KIND].execute(node({ llm: 'offline', prompt: 'Hi {{inputs.name}}' }), context());
    expect(seed.output).to.equal('Hi Ada');
    expect(seed.metadata).to.include({ provider: 'offline', offline: true });
    // Anything else passes its input on.
    expect((await kinds[DEFAULT_NODE_KIND].execute(node({ prompt: 'ignored' }), context())).output).to.equal('before');
  });
});

describe('llm kind with the offline provider', () => {
  const kinds = nodeKindsFor(portsWith());

  it('outputs the rendered prompt; tokens are the words of prompt plus output; cost 0; metadata says offline', async () => {
    const result = await kinds.llm.execute(node({ nodeType: 'llm', llm: 'offline', model: 'whatever', prompt: 'Hello {{inputs.name}}, and {{previous}}' }), context());
    expect(result.output).to.equal('Hello Ada, and before');
    expect(result.usage).to.deep.equal({ total_tokens: 8, prompt_tokens: 4, completion_tokens: 4, cost: 0 });
    expect(result.metadata).to.deep.equal({ provider: 'offline', model: 'whatever', finishReason: 'stop', offline: true });
  });

  it('a blank prompt puts the input to the model; the model may be left out for offline', async () => {
    const result = await kinds.llm.execute(node({ nodeType: 'llm', llm: 'offline', prompt: '' }), context({ input: { a: 1 } }));
    expect(result.output).to.equal('{"a":1}');
    expect((result.metadata as { model: string }).model).to.equal('offline');
  });

  it('refuses to guess: no orgId in the context, no provider, an unknown provider, no model', async () => {
    const fail = (data: Record<string, unknown>, ctx: ExecutionContext) => kinds.llm.execute(node({ nodeType: 'llm', prompt: 'x', ...data }), ctx).then(() => null, (e: unknown) => (e as { code: string }).code);
    const { orgId: _dropped, ...withoutOrg } = context();
    expect(await fail({ llm: 'offline' }, withoutOrg as ExecutionContext)).to.equal('CAPABILITY_MISSING');
    expect(await fail({}, context())).to.equal('LLM_PROVIDER_MISSING');
    expect(await fail({ llm: 'skynet' }, context())).to.equal('LLM_PROVIDER_UNKNOWN');
    expect(await fail({ llm: 'openai' }, context())).to.equal('LLM_MODEL_MISSING');
  });
});

describe('answerPromptCondition', () => {
  let fake: FakeLlmServer;
  let ports: NodeKindPorts;
  const condition = { usePrompt: true, prompt: 'Is the text positive?', targetNodeId: 'next' };
  const openaiNode = { nodeType: 'llm', llm: 'openai', model: 'gpt-4o' } as RunNode['data'];
  const signal = new AbortController().signal;

  before(async () => {
    fake = await startFakeOpenAi();
    ports = portsWith({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1` });
  });
  after(() => fake.close());

  for (const [answer, expected, unparseable] of [
    ['Yes.', true, false],
    ['**No**, it is not.', false, false],
    ['maybe', false, true],
  ] as const) {
    it(`reads "${answer}" as ${expected}${unparseable ? ' and says it could not parse it' : ''}`, async () => {
      fake.text = answer;
      fake.requests.length = 0;
      const out = await answerPromptCondition(ports, { orgId: null }, openaiNode, condition, 'What a lovely day', signal);
      expect(out.result).to.equal(expected);
      expect(out.metadata).to.include({ provider: 'openai', answer });
      expect(out.metadata.unparseable === true).to.equal(unparseable);
      expect(out.usage.total_tokens).to.equal(1200);
      const body = fake.requests[0].body;
      expect(body.temperature).to.equal(0);
      expect(body.messages[0].content).to.include('Question: Is the text positive?').and.to.include('What a lovely day');
    });
  }

  it('the offline provider echoes the question, which is neither yes nor no: false, flagged', async () => {
    const out = await answerPromptCondition(ports, { orgId: null }, { llm: 'offline' } as RunNode['data'], condition, 'text', signal);
    expect(out.result).to.equal(false);
    expect(out.metadata).to.include({ unparseable: true, offline: true });
  });

  it('a node without a provider cannot answer: CONDITION_NEEDS_MODEL', async () => {
    const err = await answerPromptCondition(ports, { orgId: null }, {} as RunNode['data'], condition, 'text', signal).then(() => null, (e: unknown) => e as { code: string });
    expect(err?.code).to.equal('CONDITION_NEEDS_MODEL');
  });
});
