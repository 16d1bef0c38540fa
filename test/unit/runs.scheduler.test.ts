import { expect } from 'chai';
import { foldRun, nextSteps, type ConditionalResult, type RunDefinition, type RunEvent, type RunNode } from '../../domain/runs/index.js';

const at = '2026-04-01T00:00:00.000Z';
const node = (id: string, data: Record<string, unknown> = {}): RunNode => ({ id, data: { nodeType: 'transform', template: id, ...data } });
const edge = (source: string, target: string) => ({ id: `${source}-${target}`, source, target });

function requested(definition: RunDefinition, mode: 'flow' | 'node' = 'flow'): RunEvent {
  return {
    type: 'RunRequested',
    data: {
      processId: 'p1',
      flowId: 'f1',
      flowVersion: 3,
      ownerId: 'u1',
      orgId: null,
      workspaceId: null,
      mode,
      nodeId: mode === 'node' ? definition.nodes[0].id : null,
      inputs: { text: 'hi' },
      async: false,
      requestedBy: 'u1',
      source: 'api',
      saveToHistory: false,
      overrideConfig: null,
      idempotencyKey: null,
      definition: definition as never,
      at,
    },
  };
}
const claimed: RunEvent = { type: 'RunStarted', data: { workerId: 'w1', at } };
const started = (nodeId: string): RunEvent => ({ type: 'NodeStarted', data: { nodeId, attempt: 1, at } });
const completed = (nodeId: string, conditionalResults: ConditionalResult[] = [], output: unknown = `out-${nodeId}`): RunEvent[] => [
  started(nodeId),
  {
    type: 'NodeCompleted',
    data: { nodeId, attempt: 1, output: output as never, metadata: {}, conditionalResults, usage: { total_tokens: 0, cost: 0 }, executionTime: 1, at },
  },
];
const failed = (nodeId: string): RunEvent[] => [
  started(nodeId),
  { type: 'NodeFailed', data: { nodeId, attempt: 1, error: { code: 'PROVIDER_ERROR', message: 'boom' }, executionTime: 1, at } },
];
const skipped = (nodeId: string): RunEvent => ({ type: 'NodeSkipped', data: { nodeId, reason: 'test', at } });
const result = (targetNodeId: string, value: boolean): ConditionalResult => ({ condition: 'contains "yes"', result: value, targetNodeId });

function stepsOf(definition: RunDefinition, ...events: Array<RunEvent | RunEvent[]>) {
  const state = foldRun([requested(definition), claimed, ...events.flat()]);
  return nextSteps(definition, state);
}
const skipIds = (s: ReturnType<typeof nextSteps>) => s.skip.map((k) => k.nodeId);

describe('run scheduler: readiness', () => {
  const chain: RunDefinition = { nodes: [node('a'), node('b'), node('c')], edges: [edge('a', 'b'), edge('b', 'c')] };

  it('runs a linear chain one node after the other, then is done', () => {
    expect(stepsOf(chain)).to.deep.equal({ ready: ['a'], skip: [], running: [], done: false });
    expect(stepsOf(chain, started('a'))).to.deep.equal({ ready: [], skip: [], running: ['a'], done: false });
    expect(stepsOf(chain, completed('a')).ready).to.deep.equal(['b']);
    expect(stepsOf(chain, completed('a'), completed('b')).ready).to.deep.equal(['c']);
    expect(stepsOf(chain, completed('a'), completed('b'), completed('c'))).to.deep.equal({ ready: [], skip: [], running: [], done: true, outcome: 'completed' });
  });

  it('joins a diamond: both branches ready together, the join waits for both', () => {
    const diamond: RunDefinition = { nodes: [node('a'), node('b'), node('c'), node('d')], edges: [edge('a', 'b'), edge('a', 'c'), edge('b', 'd'), edge('c', 'd')] };
    expect(stepsOf(diamond, completed('a')).ready).to.deep.equal(['b', 'c']);
    const oneBranch = stepsOf(diamond, completed('a'), completed('b'), started('c'));
    expect(oneBranch.ready).to.deep.equal([]);
    expect(oneBranch.running).to.deep.equal(['c']);
    expect(stepsOf(diamond, completed('a'), completed('b'), completed('c')).ready).to.deep.equal(['d']);
  });

  it('makes independent branches ready at the same time (the caller limits concurrency)', () => {
    const two: RunDefinition = { nodes: [node('a'), node('b'), node('c'), node('d')], edges: [edge('a', 'b'), edge('c', 'd')] };
    expect(stepsOf(two).ready).to.deep.equal(['a', 'c']);
    const s = stepsOf(two, completed('a'), started('c'));
    expect(s.ready).to.deep.equal(['b']);
    expect(s.running).to.deep.equal(['c']);
  });

  it('starts every node without incoming edges when no node is flagged', () => {
    const def: RunDefinition = { nodes: [node('a'), node('b'), node('c')], edges: [edge('a', 'c'), edge('b', 'c')] };
    expect(stepsOf(def).ready).to.deep.equal(['a', 'b']);
    expect(stepsOf(def, completed('a')).ready).to.deep.equal(['b']);
    expect(stepsOf(def, completed('a'), completed('b')).ready).to.deep.equal(['c']);
  });

  it('with startNode flags, starts only the flagged nodes (at once, even with incoming edges) and skips the rest that nothing reaches', () => {
    const def: RunDefinition = {
      nodes: [node('a', { startNode: true }), node('x'), node('b', { startNode: true }), node('c')],
      edges: [edge('a', 'b'), edge('x', 'c')],
    };
    const first = stepsOf(def);
    expect(first.ready).to.deep.equal(['a', 'b']);
    expect(first.skip).to.deep.equal([
      { nodeId: 'x', reason: 'not reachable from a start node' },
      { nodeId: 'c', reason: 'no incoming connection was taken: x was skipped' },
    ]);
    // b does not run twice: once it completed, a's completion makes nothing new ready.
    expect(stepsOf(def, skipped('x'), skipped('c'), completed('b'), completed('a'))).to.include({ done: true, outcome: 'completed' });
  });

  it('runs only the one node of a single-node run', () => {
    const def: RunDefinition = { nodes: [node('n1', { conditions: [{ operator: 'contains', value: 'x', targetNodeId: 'elsewhere' }] })], edges: [] };
    const state = foldRun([requested(def, 'node'), claimed]);
    expect(nextSteps(def, state).ready).to.deep.equal(['n1']);
    const after = foldRun([requested(def, 'node'), claimed, ...completed('n1', [result('elsewhere', false)])]);
    expect(nextSteps(def, after)).to.deep.equal({ ready: [], skip: [], running: [], done: true, outcome: 'completed' });
  });
});

describe('run scheduler: conditions and skips', () => {
  // c routes: y when its first condition holds, n when its second does; `always` is unconditional.
  const routed: RunDefinition = {
    nodes: [
      node('c', {
        nodeType: 'condition',
        conditions: [
          { operator: 'contains', value: 'yes', targetNodeId: 'y' },
          { operator: 'not_contains', value: 'yes', targetNodeId: 'n' },
        ],
      }),
      node('y'),
      node('y2'),
      node('n'),
      node('n2'),
      node('n3'),
      node('always'),
      node('join'),
    ],
    edges: [edge('c', 'y'), edge('c', 'n'), edge('c', 'always'), edge('y', 'y2'), edge('n', 'n2'), edge('n2', 'n3'), edge('y2', 'join'), edge('n3', 'join')],
  };

  it('takes the edge of a true condition and skips the false branch through every level', () => {
    const s = stepsOf(routed, completed('c', [result('y', true), result('n', false)]));
    expect(s.ready).to.deep.equal(['y', 'always']);
    expect(skipIds(s)).to.deep.equal(['n', 'n2', 'n3']);
    expect(s.skip[0].reason).to.equal('no incoming connection was taken: the conditions of c did not select it');
    expect(s.skip[1].reason).to.equal('no incoming connection was taken: n was skipped');
    expect(s.done).to.equal(false);
  });

  it('with the conditions the other way round, skips the other branch', () => {
    const s = stepsOf(routed, completed('c', [result('y', false), result('n', true)]));
    expect(s.ready).to.deep.equal(['n', 'always']);
    expect(skipIds(s)).to.deep.equal(['y', 'y2']);
  });

  it('runs a join reached by one taken branch once the skipped one is settled', () => {
    const events = [completed('c', [result('y', true), result('n', false)]), skipped('n'), skipped('n2'), skipped('n3'), completed('y'), completed('always')];
    expect(stepsOf(routed, ...events).ready).to.deep.equal(['y2']);
    expect(stepsOf(routed, ...events, completed('y2')).ready).to.deep.equal(['join']);
    expect(stepsOf(routed, ...events, completed('y2'), completed('join'))).to.include({ done: true, outcome: 'completed' });
  });

  it('skips every conditional target when no condition holds, and a join whose branches all died', () => {
    const s = stepsOf(routed, completed('c', [result('y', false), result('n', false)]), completed('always'));
    expect(s.ready).to.deep.equal([]);
    // In topological order, so levels interleave.
    expect(skipIds(s)).to.have.ordered.members(['y', 'n', 'y2', 'n2', 'n3', 'join']);
    expect(s.done, 'everything left is skipped').to.equal(true);
    expect(s.outcome).to.equal('completed');
  });

  it('treats a named target without a recorded result as not selected, and takes it when any condition naming it holds', () => {
    const twice: RunDefinition = {
      nodes: [
        node('c', {
          conditions: [
            { operator: 'equals', value: 'a', targetNodeId: 't' },
            { operator: 'equals', value: 'b', targetNodeId: 't' },
          ],
        }),
        node('t'),
      ],
      edges: [edge('c', 't')],
    };
    expect(skipIds(stepsOf(twice, completed('c', [])))).to.deep.equal(['t']);
    expect(stepsOf(twice, completed('c', [result('t', false), result('t', true)])).ready).to.deep.equal(['t']);
    expect(skipIds(stepsOf(twice, completed('c', [result('t', false), result('t', false)])))).to.deep.equal(['t']);
  });
});

describe('run scheduler: failures, stops and odd graphs', () => {
  const def: RunDefinition = { nodes: [node('a'), node('b'), node('c'), node('d')], edges: [edge('a', 'b'), edge('c', 'd')] };

  it('fails the run at the first failed node, even with another branch still running', () => {
    const s = stepsOf(def, failed('a'), started('c'));
    expect(s).to.deep.equal({
      ready: [],
      skip: [],
      running: ['c'],
      done: true,
      outcome: 'failed',
      failure: { code: 'NODE_FAILED', reason: 'node a failed: boom', nodeId: 'a' },
    });
  });

  it('with continueOnError, goes on: unconditional edges are taken, conditional ones are not', () => {
    const tolerant: RunDefinition = {
      nodes: [node('a', { continueOnError: true, conditions: [{ operator: 'contains', value: 'x', targetNodeId: 'c' }] }), node('b'), node('c')],
      edges: [edge('a', 'b'), edge('a', 'c')],
    };
    const s = stepsOf(tolerant, failed('a'));
    expect(s.ready).to.deep.equal(['b']);
    expect(skipIds(s)).to.deep.equal(['c']);
    expect(s.skip[0].reason).to.equal('no incoming connection was taken: a failed');
    expect(stepsOf(tolerant, failed('a'), skipped('c'), completed('b'))).to.include({ done: true, outcome: 'completed' });
  });

  it('starts nothing after a stop request, and is over once nothing runs', () => {
    const stop: RunEvent = { type: 'RunStopRequested', data: { by: 'u1', at } };
    expect(stepsOf(def, started('a'), stop)).to.deep.equal({ ready: [], skip: [], running: ['a'], done: false });
    expect(stepsOf(def, completed('a'), stop)).to.deep.equal({ ready: [], skip: [], running: [], done: true, outcome: 'stopped' });
  });

  it('reports a finished run as done with its outcome', () => {
    const completedRun: RunEvent = { type: 'RunCompleted', data: { outputs: {}, outputsTruncated: false, usage: { total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 }, at } };
    expect(stepsOf(def, completedRun)).to.deep.equal({ ready: [], skip: [], running: [], done: true, outcome: 'completed' });
  });

  it('ends a run that can never progress (a cycle, which stored flows never have) as failed', () => {
    const cyclic: RunDefinition = { nodes: [node('s', { startNode: true }), node('a'), node('b')], edges: [edge('s', 'a'), edge('a', 'b'), edge('b', 'a')] };
    expect(stepsOf(cyclic).ready).to.deep.equal(['s']);
    const s = stepsOf(cyclic, completed('s'));
    expect(s.done).to.equal(true);
    expect(s.outcome).to.equal('failed');
    expect(s.failure?.code).to.equal('RUN_STUCK');
  });
});
