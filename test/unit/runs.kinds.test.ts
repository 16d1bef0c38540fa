import { expect } from 'chai';
import {
  MAX_RUN_DELAY_MS,
  MAX_RUN_OUTPUTS_BYTES,
  PURE_NODE_KINDS,
  boundRunOutputs,
  conditionKind,
  delayKind,
  delayMs,
  foldRun,
  inputKind,
  outputKeyOf,
  outputKind,
  runOutputs,
  toHistoryUsage,
  transformKind,
  type NodeKindContext,
  type RunDefinition,
  type RunEvent,
  type RunNode,
} from '../../domain/runs/index.js';
import { jsonByteLength } from '../../domain/flows/index.js';

const node = (id: string, data: Record<string, unknown>): RunNode => ({ id, data });
const context = (overrides: Partial<NodeKindContext> = {}): NodeKindContext => ({
  processId: 'p1',
  flowId: 'f1',
  inputs: { topic: 'cats', n: 2 },
  previous: 'prev',
  nodes: { a: { output: { list: [1, 2] } } },
  variables: { style: 'short' },
  input: 'prev',
  signal: new AbortController().signal,
  ...overrides,
});

describe('pure node kinds', () => {
  it('lists one kind per type, none of them needing I/O', () => {
    expect(PURE_NODE_KINDS.map((k) => k.type)).to.deep.equal(['transform', 'condition', 'input', 'output', 'delay']);
  });

  it('transform renders its template (a lone placeholder keeps its type)', async () => {
    expect(await transformKind.execute(node('t', { template: 'A {{variables.style}} text on {{inputs.topic}} after {{previous}}' }), context())).to.deep.equal({
      output: 'A short text on cats after prev',
    });
    expect(await transformKind.execute(node('t', { template: '{{nodes.a.output}}' }), context())).to.deep.equal({ output: { list: [1, 2] } });
    expect(await transformKind.execute(node('t', {}), context())).to.deep.equal({ output: '' });
  });

  it('condition passes its input through (previous, else the run inputs)', async () => {
    expect(await conditionKind.execute(node('c', {}), context())).to.deep.equal({ output: 'prev' });
    expect(await conditionKind.execute(node('c', {}), context({ previous: null, input: { topic: 'cats' } }))).to.deep.equal({ output: { topic: 'cats' } });
  });

  it('input picks one run input or all of them', async () => {
    expect(await inputKind.execute(node('i', { inputKey: 'topic' }), context())).to.deep.equal({ output: 'cats' });
    expect(await inputKind.execute(node('i', { inputKey: 'absent' }), context())).to.deep.equal({ output: null });
    expect(await inputKind.execute(node('i', { inputKey: 'toString' }), context()), 'no inherited names').to.deep.equal({ output: null });
    expect(await inputKind.execute(node('i', {}), context())).to.deep.equal({ output: { topic: 'cats', n: 2 } });
  });

  it('output collects its input, or renders its template; its key is outputKey or its id', async () => {
    expect(await outputKind.execute(node('o', {}), context())).to.deep.equal({ output: 'prev' });
    expect(await outputKind.execute(node('o', { template: 'Result: {{previous}}' }), context())).to.deep.equal({ output: 'Result: prev' });
    expect(outputKeyOf(node('o', { outputKey: 'summary' }))).to.equal('summary');
    expect(outputKeyOf(node('o', { outputKey: '' }))).to.equal('o');
  });

  it('delay bounds its milliseconds and waits through the sleep capability', async () => {
    expect([delayMs(node('d', { delayMs: 250 })), delayMs(node('d', { delayMs: 10.6 })), delayMs(node('d', { delayMs: -5 })), delayMs(node('d', { delayMs: 'x' })), delayMs(node('d', {}))]).to.deep.equal([
      250, 11, 0, 0, 0,
    ]);
    expect(delayMs(node('d', { delayMs: MAX_RUN_DELAY_MS * 10 }))).to.equal(MAX_RUN_DELAY_MS);
    const slept: number[] = [];
    const result = await delayKind.execute(node('d', { delayMs: 40 }), context({ sleep: async (ms) => void slept.push(ms) }));
    expect(result).to.deep.equal({ output: 'prev', metadata: { delayMs: 40 } });
    expect(slept).to.deep.equal([40]);
    let error: unknown;
    await delayKind.execute(node('d', { delayMs: 1 }), context()).catch((err) => (error = err));
    expect(error).to.have.property('code', 'CAPABILITY_MISSING');
  });
});

const at = '2026-04-01T00:00:00.000Z';
function finished(definition: RunDefinition, outputs: Record<string, unknown>, mode: 'flow' | 'node' = 'flow') {
  const events: RunEvent[] = [
    {
      type: 'RunRequested',
      data: {
        processId: 'p',
        flowId: 'f',
        flowVersion: 0,
        ownerId: 'u',
        orgId: null,
        workspaceId: null,
        mode,
        nodeId: mode === 'node' ? definition.nodes[0].id : null,
        inputs: {},
        async: false,
        requestedBy: null,
        source: 'api',
        saveToHistory: false,
        overrideConfig: null,
        idempotencyKey: null,
        definition: definition as never,
        at,
      },
    },
  ];
  for (const [nodeId, output] of Object.entries(outputs)) {
    events.push({ type: 'NodeStarted', data: { nodeId, attempt: 1, at } });
    events.push({ type: 'NodeCompleted', data: { nodeId, attempt: 1, output: output as never, metadata: {}, conditionalResults: [], usage: { total_tokens: 0, cost: 0 }, executionTime: 0, at } });
  }
  return foldRun(events);
}

describe('run outputs', () => {
  it('collects completed output nodes by outputKey, else by id', () => {
    const def: RunDefinition = {
      nodes: [node('a', {}), node('o1', { nodeType: 'output', outputKey: 'summary' }), node('o2', { nodeType: 'output' }), node('o3', { nodeType: 'output' })],
      edges: [
        { id: 'e1', source: 'a', target: 'o1' },
        { id: 'e2', source: 'a', target: 'o2' },
        { id: 'e3', source: 'a', target: 'o3' },
      ],
    };
    expect(runOutputs(def, finished(def, { a: 'A', o1: 'S', o2: { k: 1 } }))).to.deep.equal({ summary: 'S', o2: { k: 1 } });
  });

  it('without output nodes, takes the ends of the branches that ran', () => {
    const def: RunDefinition = {
      nodes: [node('a', {}), node('b', {}), node('c', {}), node('d', {})],
      edges: [
        { id: 'e1', source: 'a', target: 'b' },
        { id: 'e2', source: 'a', target: 'c' },
        { id: 'e3', source: 'c', target: 'd' },
      ],
    };
    expect(runOutputs(def, finished(def, { a: 'A', b: 'B', c: 'C' })), 'd was skipped, so c ends its branch').to.deep.equal({ b: 'B', c: 'C' });
  });

  it('gives the node output of a single-node run, even an output node', () => {
    const def: RunDefinition = { nodes: [node('o', { nodeType: 'output', outputKey: 'x' })], edges: [] };
    expect(runOutputs(def, finished(def, { o: 42 }, 'node'))).to.deep.equal({ o: 42 });
  });

  it('cuts outputs too big for RunCompleted to previews, within the limit', () => {
    const small = { a: 'x' };
    expect(boundRunOutputs(small)).to.deep.equal({ outputs: small, outputsTruncated: false });
    const big = { a: 'x'.repeat(MAX_RUN_OUTPUTS_BYTES), b: { quote: '"'.repeat(MAX_RUN_OUTPUTS_BYTES / 2) } };
    const { outputs, outputsTruncated } = boundRunOutputs(big);
    expect(outputsTruncated).to.equal(true);
    expect(Object.keys(outputs)).to.deep.equal(['a', 'b']);
    expect(outputs.a).to.be.a('string').and.satisfy((s: string) => s.startsWith('"xxx'));
    expect(jsonByteLength(outputs)).to.be.at.most(MAX_RUN_OUTPUTS_BYTES);
  });

  it('converts usage to the flows history shape', () => {
    expect(toHistoryUsage({ total_tokens: 5, prompt_tokens: 3, cost: 0.1 })).to.deep.equal({ totalTokens: 5, promptTokens: 3, cost: 0.1 });
  });
});
