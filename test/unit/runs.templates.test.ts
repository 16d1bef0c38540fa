import { expect } from 'chai';
import {
  MAX_RENDERED_LENGTH,
  RunInputError,
  effectiveNodeData,
  foldRun,
  nodeInputs,
  renderTemplate,
  renderValue,
  unresolvedPlaceholders,
  type ConditionalResult,
  type RunDefinition,
  type RunEvent,
  type RunNode,
  type TemplateContext,
} from '../../domain/runs/index.js';

const context: TemplateContext = {
  inputs: { name: 'Ada', count: 3, flag: false, nested: { city: 'Paris', tags: ['a', 'b'] }, nothing: null },
  previous: 'the previous answer',
  nodes: { fetch: { output: { items: [{ id: 7, title: 'first' }] } }, llm: { output: '{"sentiment": "positive", "score": 0.9}' } },
  variables: { tone: 'dry', limits: { max: 5 } },
};

describe('templates', () => {
  it('{{state.x}} is a root only where a workflow state is given; elsewhere it stays as written', () => {
    expect(renderTemplate('stage {{state.stage}}', context)).to.equal('stage {{state.stage}}');
    expect(renderTemplate('stage {{state.stage}}, {{inputs.name}}', { ...context, state: { stage: 'two' } })).to.equal('stage two, Ada');
    expect(renderValue('{{state.counts}}', { ...context, state: { counts: [1, 2] } })).to.deep.equal([1, 2]);
    expect(unresolvedPlaceholders('{{state.nothing}}', { ...context, state: {} })).to.deep.equal(['{{state.nothing}}']);
  });

  it('renders each root, dotted paths and array indexes', () => {
    expect(renderTemplate('Hi {{inputs.name}} ({{ inputs.count }}, {{inputs.flag}})', context)).to.equal('Hi Ada (3, false)');
    expect(renderTemplate('{{inputs.nested.city}} {{inputs.nested.tags.1}}', context)).to.equal('Paris b');
    expect(renderTemplate('Before: {{previous}}', context)).to.equal('Before: the previous answer');
    expect(renderTemplate('{{nodes.fetch.output.items.0.title}} #{{nodes.fetch.output.items.0.id}}', context)).to.equal('first #7');
    expect(renderTemplate('Tone {{variables.tone}}, max {{variables.limits.max}}', context)).to.equal('Tone dry, max 5');
  });

  it('renders objects as JSON and null as empty', () => {
    expect(renderTemplate('{{inputs.nested}}', context)).to.equal('{"city":"Paris","tags":["a","b"]}');
    expect(renderTemplate('{{nodes.fetch}}', context)).to.equal('{"output":{"items":[{"id":7,"title":"first"}]}}');
    expect(renderTemplate('[{{inputs.nothing}}]', context)).to.equal('[]');
  });

  it('looks inside a string holding JSON when the path goes on', () => {
    expect(renderTemplate('{{nodes.llm.output.sentiment}} {{nodes.llm.output.score}}', context)).to.equal('positive 0.9');
    expect(renderTemplate('[{{previous.length}}]', context), 'a plain string has no fields').to.equal('[]');
  });

  it('renders paths that lead nowhere as empty and lists them', () => {
    const t = 'a{{inputs.missing}}b{{nodes.ghost.output}}c{{inputs.name.first}}d{{inputs.constructor}}e{{inputs.__proto__}}f{{inputs.nested.tags.9}}';
    expect(renderTemplate(t, context)).to.equal('abcdef');
    expect(unresolvedPlaceholders(t, context)).to.deep.equal([
      '{{inputs.missing}}',
      '{{nodes.ghost.output}}',
      '{{inputs.name.first}}',
      '{{inputs.constructor}}',
      '{{inputs.__proto__}}',
      '{{inputs.nested.tags.9}}',
    ]);
    expect(unresolvedPlaceholders('{{inputs.name}} {{previous}}', context)).to.deep.equal([]);
  });

  it('leaves other braces alone and never re-scans substituted text', () => {
    expect(renderTemplate('{{user.name}} {{ }} {inputs.name} {{inputs name}}', context)).to.equal('{{user.name}} {{ }} {inputs.name} {{inputs name}}');
    const tricky: TemplateContext = { ...context, inputs: { a: '{{inputs.b}}', b: 'secret' } };
    expect(renderTemplate('{{inputs.a}}', tricky)).to.equal('{{inputs.b}}');
  });

  it('keeps the type of a template that is one placeholder', () => {
    expect(renderValue('{{nodes.fetch.output}}', context)).to.deep.equal({ items: [{ id: 7, title: 'first' }] });
    expect(renderValue('{{ inputs.count }}', context)).to.equal(3);
    expect(renderValue('{{inputs.nothing}}', context)).to.equal(null);
    expect(renderValue('{{inputs.missing}}', context)).to.equal('');
    expect(renderValue('n={{inputs.count}}', context)).to.equal('n=3');
  });

  it('refuses to build a giant text', () => {
    const big: TemplateContext = { ...context, previous: 'x'.repeat(MAX_RENDERED_LENGTH / 2) };
    expect(renderTemplate('{{previous}}{{previous}}', big)).to.have.length(MAX_RENDERED_LENGTH);
    expect(() => renderTemplate('{{previous}}{{previous}}{{previous}}', big))
      .to.throw(RunInputError)
      .with.property('code', 'TEMPLATE_TOO_LARGE');
  });
});

const at = '2026-04-01T00:00:00.000Z';
const node = (id: string, data: Record<string, unknown> = {}): RunNode => ({ id, data: { nodeType: 'transform', template: id, ...data } });
const edge = (source: string, target: string) => ({ id: `${source}-${target}`, source, target });
function stateOf(definition: RunDefinition, events: RunEvent[], extra: { mode?: 'flow' | 'node' } = {}) {
  const requested: RunEvent = {
    type: 'RunRequested',
    data: {
      processId: 'p1',
      flowId: 'f1',
      flowVersion: 0,
      ownerId: 'u1',
      orgId: null,
      workspaceId: null,
      mode: extra.mode ?? 'flow',
      nodeId: extra.mode === 'node' ? definition.nodes[0].id : null,
      inputs: { q: 'question' },
      async: false,
      requestedBy: null,
      source: 'trigger',
      saveToHistory: false,
      overrideConfig: { model: 'gpt-4o-mini', temperature: 0 },
      idempotencyKey: null,
      definition: definition as never,
      at,
    },
  };
  return foldRun([requested, { type: 'RunStarted', data: { workerId: 'w', at } }, ...events]);
}
const done = (nodeId: string, output: unknown, conditionalResults: ConditionalResult[] = []): RunEvent[] => [
  { type: 'NodeStarted', data: { nodeId, attempt: 1, at } },
  { type: 'NodeCompleted', data: { nodeId, attempt: 1, output: output as never, metadata: {}, conditionalResults, usage: { total_tokens: 0, cost: 0 }, executionTime: 0, at } },
];

describe('node inputs', () => {
  const def: RunDefinition = {
    nodes: [node('s'), node('a', { variables: { tone: 'warm' } }), node('b'), node('j'), node('other')],
    edges: [edge('s', 'a'), edge('s', 'b'), edge('a', 'j'), edge('b', 'j')],
  };

  it('gives a start node the run inputs, no previous, and its variables', () => {
    expect(nodeInputs(def, stateOf(def, []), 's')).to.deep.equal({ inputs: { q: 'question' }, previous: null, nodes: {}, variables: {}, input: { q: 'question' } });
  });

  it('gives a node its single predecessor as previous and upstream outputs by id', () => {
    const got = nodeInputs(def, stateOf(def, done('s', 'S')), 'a');
    expect(got).to.deep.equal({ inputs: { q: 'question' }, previous: 'S', nodes: { s: { output: 'S' } }, variables: { tone: 'warm' }, input: 'S' });
  });

  it('gives a join an object of its predecessors, and every finished ancestor (not other branches)', () => {
    const state = stateOf(def, [...done('other', 'O'), ...done('s', 'S'), ...done('a', { x: 1 }), ...done('b', 'B')]);
    const got = nodeInputs(def, state, 'j');
    expect(got.previous).to.deep.equal({ a: { x: 1 }, b: 'B' });
    expect(got.nodes).to.deep.equal({ a: { output: { x: 1 } }, b: { output: 'B' }, s: { output: 'S' } });
  });

  it('leaves out predecessors whose edge was not taken, and shows a tolerated failure as an error output', () => {
    const routed: RunDefinition = {
      nodes: [node('c', { conditions: [{ operator: 'contains', value: 'x', targetNodeId: 'j' }] }), node('f', { continueOnError: true }), node('j')],
      edges: [edge('c', 'j'), edge('f', 'j')],
    };
    const failedF: RunEvent[] = [
      { type: 'NodeStarted', data: { nodeId: 'f', attempt: 1, at } },
      { type: 'NodeFailed', data: { nodeId: 'f', attempt: 1, error: { code: 'HTTP_STATUS', message: '502' }, executionTime: 1, at } },
    ];
    const state = stateOf(routed, [...done('c', 'no x here', [{ condition: 'contains "x"', result: false, targetNodeId: 'j' }]), ...failedF]);
    const got = nodeInputs(routed, state, 'j');
    expect(got.previous).to.deep.equal({ error: { code: 'HTTP_STATUS', message: '502' } });
    expect(got.nodes.c).to.deep.equal({ output: 'no x here' }, 'still an ancestor that finished');
  });

  it('refuses an unknown node', () => {
    expect(() => nodeInputs(def, stateOf(def, []), 'zz')).to.throw().with.property('code', 'NODE_NOT_FOUND');
  });

  it('applies overrideConfig to llm nodes of a flow run, to the one node of a single-node run', () => {
    const llm = node('l', { nodeType: 'llm', llm: 'openai', model: 'gpt-4o', temperature: 1, maxTokens: 100 });
    const plain = node('t');
    const flow = stateOf({ nodes: [llm, plain], edges: [] }, []);
    expect(effectiveNodeData(llm, flow)).to.include({ model: 'gpt-4o-mini', temperature: 0, maxTokens: 100 });
    expect(effectiveNodeData(plain, flow)).to.equal(plain.data);
    const single = stateOf({ nodes: [plain], edges: [] }, [], { mode: 'node' });
    expect(effectiveNodeData(plain, single)).to.include({ model: 'gpt-4o-mini', temperature: 0 });
    expect(effectiveNodeData(llm, { ...single, overrideConfig: null })).to.equal(llm.data);
  });
});
