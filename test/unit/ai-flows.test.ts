import { expect } from 'chai';
import { checkAnswer, extractJson } from '../../commands/ai-flows-check.js';
import { DESIGNABLE_NODE_TYPES, attemptMessages, flowAnswerSchema, retryRequest, systemPrompt } from '../../commands/ai-flows-schema.js';
import { nodeModelHint } from '../../commands/ai-flows.js';
import { NODE_TYPES, nodeTypeCatalogue } from '../../domain/flows/index.js';

const node = (id: string, data: Record<string, unknown>, x = 0) => ({ id, type: 'custom', position: { x, y: 0 }, data });
const flow = (extra: { nodes?: unknown[]; edges?: unknown[] } = {}) => ({
  name: 'Greeter',
  nodes: extra.nodes ?? [node('in', { nodeType: 'input' }), node('greet', { nodeType: 'llm', llm: 'anthropic', model: 'claude-sonnet-4-0', prompt: 'Greet {{inputs.name}}' }, 250), node('out', { nodeType: 'output' }, 500)],
  edges: extra.edges ?? [
    { id: 'e1', source: 'in', target: 'greet' },
    { id: 'e2', source: 'greet', target: 'out' },
  ],
});
const problemsOf = (text: string) => {
  const checked = checkAnswer(text);
  expect(checked.ok, 'refused').to.equal(false);
  return checked.ok ? [] : checked.problems;
};

describe('AI flow generation: reading and checking answers', () => {
  it('reads a bare object, a fenced ```json block and an object wrapped in prose', () => {
    expect(extractJson('{"a":1}')).to.deep.equal({ ok: true, value: { a: 1 } });
    expect(extractJson('Sure!\n```json\n{"a":2}\n```\nEnjoy.')).to.deep.equal({ ok: true, value: { a: 2 } });
    expect(extractJson('```\n{"a":3}\n```')).to.deep.equal({ ok: true, value: { a: 3 } });
    expect(extractJson('The flow is {"a":4} as asked')).to.deep.equal({ ok: true, value: { a: 4 } });
    expect(extractJson('no json here').ok).to.equal(false);
  });

  it('accepts a valid flow and keeps only the fields a node has', () => {
    const answer = flow();
    (answer.nodes[0] as Record<string, unknown>).label = 'dropped';
    const checked = checkAnswer(JSON.stringify(answer));
    expect(checked.ok, JSON.stringify(checked)).to.equal(true);
    if (!checked.ok) return;
    expect(checked.flow.name).to.equal('Greeter');
    expect(checked.flow.description).to.equal(null);
    expect(checked.flow.nodes[0]).to.deep.equal(node('in', { nodeType: 'input' }));
    expect(checked.flow.edges).to.have.length(2);
  });

  it('fills cosmetic gaps: renderer type, position and edge ids', () => {
    const checked = checkAnswer(JSON.stringify({ name: 'x', nodes: [{ id: 'a', data: { nodeType: 'input' } }, { id: 'b', data: { nodeType: 'output' } }], edges: [{ source: 'a', target: 'b' }] }));
    expect(checked.ok, JSON.stringify(checked)).to.equal(true);
    if (!checked.ok) return;
    expect(checked.flow.nodes[1]).to.deep.include({ type: 'custom', position: { x: 250, y: 0 } });
    expect(checked.flow.edges[0]).to.deep.include({ id: 'e1', source: 'a', target: 'b' });
  });

  it('refuses malformed JSON and non-objects', () => {
    expect(problemsOf('{"nodes": [')[0].code).to.equal('MALFORMED_JSON');
    expect(problemsOf('[1, 2]')[0].code).to.equal('MALFORMED_JSON');
    expect(problemsOf('{"name": "x", "nodes": []}').map((p) => p.field)).to.include('nodes');
  });

  it('reports every graph problem of the connections validator: cycle, dangling edge, unreachable node, condition target without edge', () => {
    const cyclic = flow({ edges: [...flow().edges, { id: 'back', source: 'out', target: 'greet' }] });
    expect(problemsOf(JSON.stringify(cyclic)).map((p) => p.code)).to.include('CYCLE');
    const dangling = flow({ edges: [...flow().edges, { id: 'x', source: 'out', target: 'ghost' }] });
    expect(problemsOf(JSON.stringify(dangling)).map((p) => p.code)).to.include('DANGLING_EDGE');
    const island = flow({ nodes: [...flow().nodes, node('island', { nodeType: 'output' })], edges: [...flow().edges, { id: 'e3', source: 'island', target: 'out' }] });
    const started = JSON.parse(JSON.stringify(island));
    started.nodes[0].data.startNode = true;
    expect(problemsOf(JSON.stringify(started)).map((p) => p.code)).to.include('UNREACHABLE_NODE');
    const condition = flow({
      nodes: [node('in', { nodeType: 'input' }), node('check', { nodeType: 'condition', conditions: [{ operator: 'is_empty', targetNodeId: 'out' }] }), node('out', { nodeType: 'output' })],
      edges: [{ id: 'e1', source: 'in', target: 'check' }, { id: 'e2', source: 'in', target: 'out' }],
    });
    expect(problemsOf(JSON.stringify(condition)).map((p) => p.code)).to.include('CONDITION_TARGET_WITHOUT_EDGE');
  });

  it('reports node problems with their path: unknown model, missing prompt, bad id, duplicate ids, unoffered node type', () => {
    const bad = flow({
      nodes: [
        node('in', { nodeType: 'input' }),
        node('greet', { nodeType: 'llm', llm: 'openai', model: 'gpt-9' }),
        node('greet', { nodeType: 'output' }),
        node('_bad', { nodeType: 'output' }),
        node('tool', { nodeType: 'mcp_tool', mcpServerId: 's', toolName: 't' }),
        node('none', {}),
      ],
      edges: [],
    });
    const problems = problemsOf(JSON.stringify(bad));
    const fields = problems.map((p) => p.field);
    expect(fields).to.include.members(['nodes.1.data.model', 'nodes.1.data.prompt', 'nodes.2.id', 'nodes.3.id', 'nodes.4.data.nodeType', 'nodes.5.data.nodeType']);
    expect(problems.find((p) => p.field === 'nodes.1.data.model')!.message).to.include('unknown model for openai');
  });
});

describe('AI flow generation: what the model is told', () => {
  it('the answer schema has one node variant per designable type, each with the catalogue data schema and nodeType pinned', () => {
    const schema = flowAnswerSchema() as any;
    const variants = schema.properties.nodes.items.oneOf;
    expect(variants.map((v: any) => v.properties.data.properties.nodeType.const)).to.deep.equal([...DESIGNABLE_NODE_TYPES]);
    expect(DESIGNABLE_NODE_TYPES).to.deep.equal(NODE_TYPES.filter((t) => t !== 'mcp_tool'));
    const llm = variants.find((v: any) => v.properties.data.properties.nodeType.const === 'llm').properties.data;
    const catalogue = nodeTypeCatalogue().find((t) => t.nodeType === 'llm')!.dataSchema as any;
    expect(llm.required).to.include.members(['nodeType', ...catalogue.required]);
    expect(llm.properties.llm).to.deep.equal(catalogue.properties.llm);
    // Every $ref points at a definition of the document.
    const refs = [...JSON.stringify(schema).matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).to.be.greaterThan(0);
    for (const ref of refs) expect(schema.$defs).to.have.property(ref);
  });

  it('the system prompt lists the known models and the suggested one; the retry states every problem', () => {
    const prompt = systemPrompt({ llm: 'google', model: 'gemini-2.0-flash' });
    for (const text of ['gpt-4o-mini', 'claude-3-5-haiku-latest', 'Use llm "google" with model "gemini-2.0-flash"', '"$defs"']) expect(prompt).to.include(text);
    const retry = retryRequest([{ field: 'graph', code: 'CYCLE', message: 'flows must be acyclic: a → b → a' }, { field: 'nodes.1.data.model', message: 'unknown model' }]);
    expect(retry).to.include('[CYCLE] graph: flows must be acyclic: a → b → a');
    expect(retry).to.include('nodes.1.data.model: unknown model');
    const many = retryRequest(Array.from({ length: 60 }, (_, i) => ({ field: `nodes.${i}`, message: 'bad' })));
    expect(many).to.include('and 10 more');
    const messages = attemptMessages(null, 'do it', { answer: '{}', problems: [{ field: 'nodes', message: 'required' }] });
    expect(messages.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'user']);
    expect(messages[3].content).to.include('nodes: required');
  });

  it('llm nodes default to the designing model when the flow domain knows it, else to the provider\'s first listed model', () => {
    expect(nodeModelHint('openai', 'gpt-4o-mini')).to.deep.equal({ llm: 'openai', model: 'gpt-4o-mini' });
    expect(nodeModelHint('anthropic', 'claude-opus-next')).to.deep.equal({ llm: 'anthropic', model: 'claude-3-5-sonnet-latest' });
    expect(nodeModelHint('openai_compatible', 'llama3')).to.deep.equal({ llm: 'openai_compatible', model: 'llama3' });
  });
});
