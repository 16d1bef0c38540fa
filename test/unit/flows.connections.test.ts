import { expect } from 'chai';
import {
  MAX_EDGES_PER_FLOW,
  findCycles,
  flowDecider,
  startNodeIds,
  validateGraph,
  type FlowCommand,
  type FlowEdge,
  type FlowEvent,
  type FlowNode,
  type GraphProblem,
} from '../../domain/flows/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(flowDecider);
const at = '2026-03-01T00:00:00.000Z';

const node = (id: string, data: Record<string, unknown> = {}): FlowNode => ({ id, type: 'custom', position: { x: 0, y: 0 }, data });
const edge = (id: string, source: string, target: string, extra: Partial<FlowEdge> = {}): FlowEdge => ({ id, source, target, ...extra });
const created: FlowEvent = {
  type: 'FlowCreated',
  data: { flowId: 'f1', name: 'Flow', description: '', ownerId: 'u1', orgId: null, workspaceId: null, nodes: [node('a'), node('b'), node('c')], edges: [], createdAt: at },
};
const connected = (e: FlowEdge): FlowEvent => ({ type: 'ConnectionAdded', data: { edge: e, at } });
const add = (connectionId: string, source: string, target: string, extra: Partial<FlowEdge> = {}): FlowCommand => ({
  type: 'AddConnection',
  connectionId,
  connection: { source, target, ...extra },
  at,
});

describe('flow decider: connections', () => {
  it('adds a connection with its optional fields, keeping only known ones', () => {
    const extra = { sourceHandle: 'yes', targetHandle: null, label: 'when yes', data: { weight: 1 } };
    spec.given([created]).when(add('e1', 'a', 'b', extra)).then([{ type: 'ConnectionAdded', data: { edge: edge('e1', 'a', 'b', extra), at } }]);
    const sloppy = { ...add('e1', 'a', 'b'), connection: { source: 'a', target: 'b', animated: true } } as unknown as FlowCommand;
    spec.given([created]).when(sloppy).then([{ type: 'ConnectionAdded', data: { edge: edge('e1', 'a', 'b'), at } }]);
  });

  it('refuses a self-loop, a dangling end, a duplicate and a cycle, each with its own code', () => {
    const events = [created, connected(edge('e1', 'a', 'b')), connected(edge('e2', 'b', 'c'))];
    spec.given(events).when(add('x', 'a', 'a')).thenThrows('SELF_LOOP', 'invalid');
    const dangling = spec.given(events).when(add('x', 'a', 'ghost')).thenThrows('DANGLING_EDGE', 'invalid');
    expect((dangling.details as { problems: GraphProblem[] }).problems[0].nodeIds).to.deep.equal(['ghost']);
    spec.given(events).when(add('x', 'a', 'b')).thenThrows('DUPLICATE_EDGE', 'invalid');
    const cycle = spec.given(events).when(add('x', 'c', 'a')).thenThrows('CYCLE', 'invalid');
    expect((cycle.details as { problems: GraphProblem[] }).problems[0].nodeIds).to.deep.equal(['c', 'a', 'b']);
    // Different handles make a different connection.
    expect(spec.given(events).when(add('x', 'a', 'b', { sourceHandle: 'no' })).events()).to.have.length(1);
  });

  it('refuses a taken connection id (409), a malformed one, and the edge limit', () => {
    const events = [created, connected(edge('e1', 'a', 'b'))];
    spec.given(events).when(add('e1', 'a', 'c')).thenThrows('CONNECTION_ID_TAKEN', 'conflict');
    const bad = spec.given(events).when(add('bad id', 'a', 'c', { label: 'x'.repeat(501) })).thenThrows('VALIDATION_FAILED', 'invalid');
    expect((bad.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field)).to.deep.equal(['body.id', 'body.label']);
    // The limit is checked against the stream as it stands, whatever made it that long.
    const many = Array.from({ length: MAX_EDGES_PER_FLOW }, (_, i) => connected(edge(`m${i}`, 'a', 'b', { sourceHandle: `h${i}` })));
    const err = spec.given([created, ...many]).when(add('one-more', 'a', 'c')).thenThrows('LIMIT_EXCEEDED', 'invalid');
    expect(err.details).to.deep.include({ limit: 'edgesPerFlow', max: MAX_EDGES_PER_FLOW });
  });

  it('adds a batch all or none, each checked against the ones before it', () => {
    const batch: FlowCommand = {
      type: 'AddConnections',
      connections: [
        { connectionId: 'e1', connection: { source: 'a', target: 'b' } },
        { connectionId: 'e2', connection: { source: 'b', target: 'c' } },
      ],
      at,
    };
    expect(spec.given([created]).when(batch).events().map((e) => e.type === 'ConnectionAdded' && e.data.edge.id)).to.deep.equal(['e1', 'e2']);
    const closing = { ...batch, connections: [...batch.connections, { connectionId: 'e3', connection: { source: 'c', target: 'a' } }] } as FlowCommand;
    const err = spec.given([created]).when(closing).thenThrows('CYCLE', 'invalid');
    expect(err.details).to.deep.include({ index: 2 });
    const repeated = { ...batch, connections: [batch.connections[0], { connectionId: 'e1', connection: { source: 'a', target: 'c' } }] } as FlowCommand;
    expect(spec.given([created]).when(repeated).thenThrows('CONNECTION_ID_TAKEN', 'conflict').details).to.deep.include({ index: 1 });
    const badField = { ...batch, connections: [batch.connections[0], { connectionId: 'e9', connection: { source: '', target: 'c' } }] } as FlowCommand;
    const fields = (spec.given([created]).when(badField).thenThrows('VALIDATION_FAILED', 'invalid').details as { fields: Array<{ field: string }> }).fields;
    expect(fields.map((f) => f.field)).to.deep.equal(['body.connections.1.source']);
  });

  it('updates a connection: changes merged, a moved end re-checked, nothing new is no event', () => {
    const events = [created, connected(edge('e1', 'a', 'b')), connected(edge('e2', 'b', 'c'))];
    spec.given(events).when({ type: 'UpdateConnection', connectionId: 'e1', changes: { label: 'L', target: 'c' }, at }).then([
      { type: 'ConnectionUpdated', data: { edge: edge('e1', 'a', 'c', { label: 'L' }), at } },
    ]);
    spec.given(events).when({ type: 'UpdateConnection', connectionId: 'e1', changes: { target: 'b' }, at }).then([]);
    spec.given(events).when({ type: 'UpdateConnection', connectionId: 'e2', changes: { target: 'a' }, at }).thenThrows('CYCLE', 'invalid');
    spec.given(events).when({ type: 'UpdateConnection', connectionId: 'e2', changes: { source: 'c' }, at }).thenThrows('SELF_LOOP', 'invalid');
    spec.given(events).when({ type: 'UpdateConnection', connectionId: 'e2', changes: { source: 'a', target: 'b' }, at }).thenThrows('DUPLICATE_EDGE', 'invalid');
    spec.given(events).when({ type: 'UpdateConnection', connectionId: 'e2', changes: { source: 'zz' }, at }).thenThrows('DANGLING_EDGE', 'invalid');
    spec.given(events).when({ type: 'UpdateConnection', connectionId: 'nope', changes: { label: 'x' }, at }).thenThrows('CONNECTION_NOT_FOUND', 'not_found');
    const state = spec.stateOf([...events, ...spec.given(events).when({ type: 'UpdateConnection', connectionId: 'e1', changes: { target: 'c' }, at }).events()]);
    expect(state.edges.map((e) => [e.id, e.target])).to.deep.equal([['e1', 'c'], ['e2', 'c']]);
  });

  it('removes one connection, or a batch all or none naming every unknown id', () => {
    const events = [created, connected(edge('e1', 'a', 'b')), connected(edge('e2', 'b', 'c'))];
    spec.given(events).when({ type: 'RemoveConnection', connectionId: 'e1', at }).then([{ type: 'ConnectionRemoved', data: { edgeId: 'e1', at } }]);
    spec.given(events).when({ type: 'RemoveConnection', connectionId: 'zz', at }).thenThrows('CONNECTION_NOT_FOUND', 'not_found');
    const out = spec.given(events).when({ type: 'RemoveConnections', connectionIds: ['e1', 'e2', 'e1'], at }).events();
    expect(out).to.deep.equal([
      { type: 'ConnectionRemoved', data: { edgeId: 'e1', at } },
      { type: 'ConnectionRemoved', data: { edgeId: 'e2', at } },
    ]);
    expect(spec.stateOf([...events, ...out]).edges).to.deep.equal([]);
    const err = spec.given(events).when({ type: 'RemoveConnections', connectionIds: ['e1', 'x', 'y'], at }).thenThrows('CONNECTION_NOT_FOUND', 'not_found');
    expect(err.details).to.deep.equal({ connectionIds: ['x', 'y'] });
  });

  it('answers FLOW_NOT_FOUND for connections of a missing flow', () => {
    spec.given([]).when(add('e1', 'a', 'b')).thenThrows('FLOW_NOT_FOUND', 'not_found');
    spec.given([]).when({ type: 'RemoveConnections', connectionIds: ['e1'], at }).thenThrows('FLOW_NOT_FOUND', 'not_found');
  });
});

describe('graph validation', () => {
  const codes = (problems: GraphProblem[]) => problems.map((p) => p.code);
  const n = (id: string, data: Record<string, unknown> = {}) => node(id, data);

  const table: Array<{ name: string; nodes: FlowNode[]; edges: FlowEdge[]; expected: string[] }> = [
    { name: 'an empty flow', nodes: [], edges: [], expected: [] },
    { name: 'a chain', nodes: [n('a'), n('b'), n('c')], edges: [edge('1', 'a', 'b'), edge('2', 'b', 'c')], expected: [] },
    { name: 'a diamond', nodes: [n('a'), n('b'), n('c'), n('d')], edges: [edge('1', 'a', 'b'), edge('2', 'a', 'c'), edge('3', 'b', 'd'), edge('4', 'c', 'd')], expected: [] },
    { name: 'a self-loop', nodes: [n('a')], edges: [edge('1', 'a', 'a')], expected: ['SELF_LOOP'] },
    { name: 'a duplicate edge', nodes: [n('a'), n('b')], edges: [edge('1', 'a', 'b'), edge('2', 'a', 'b')], expected: ['DUPLICATE_EDGE'] },
    { name: 'null and absent handles as the same', nodes: [n('a'), n('b')], edges: [edge('1', 'a', 'b', { sourceHandle: null }), edge('2', 'a', 'b')], expected: ['DUPLICATE_EDGE'] },
    { name: 'distinct handles', nodes: [n('a'), n('b')], edges: [edge('1', 'a', 'b', { sourceHandle: 'x' }), edge('2', 'a', 'b', { sourceHandle: 'y' })], expected: [] },
    { name: 'a dangling target', nodes: [n('a')], edges: [edge('1', 'a', 'ghost')], expected: ['DANGLING_EDGE'] },
    { name: 'a two-node cycle with an entry', nodes: [n('s'), n('a'), n('b')], edges: [edge('0', 's', 'a'), edge('1', 'a', 'b'), edge('2', 'b', 'a')], expected: ['CYCLE'] },
    { name: 'a cycle without an entry', nodes: [n('a'), n('b')], edges: [edge('1', 'a', 'b'), edge('2', 'b', 'a')], expected: ['CYCLE', 'UNREACHABLE_NODE', 'UNREACHABLE_NODE'] },
    { name: 'a node behind a non-start node when a start node is flagged', nodes: [n('a', { startNode: true }), n('b')], edges: [], expected: ['UNREACHABLE_NODE'] },
    {
      name: 'a condition target without an edge',
      nodes: [n('a', { conditions: [{ operator: 'is_empty', targetNodeId: 'b' }, { operator: 'is_empty', targetNodeId: 'c' }] }), n('b'), n('c')],
      edges: [edge('1', 'a', 'b')],
      expected: ['CONDITION_TARGET_WITHOUT_EDGE'],
    },
    {
      name: 'everything at once',
      nodes: [n('a', { startNode: true, conditions: [{ usePrompt: true, prompt: 'ok?', targetNodeId: 'd' }] }), n('b'), n('c'), n('d')],
      edges: [edge('1', 'a', 'a'), edge('2', 'a', 'zz'), edge('3', 'b', 'c'), edge('4', 'c', 'b'), edge('5', 'b', 'c')],
      expected: ['DANGLING_EDGE', 'SELF_LOOP', 'DUPLICATE_EDGE', 'CYCLE', 'UNREACHABLE_NODE', 'UNREACHABLE_NODE', 'UNREACHABLE_NODE', 'CONDITION_TARGET_WITHOUT_EDGE'],
    },
  ];
  for (const row of table) {
    it(`reports ${row.expected.join(', ') || 'nothing'} for ${row.name}`, () => {
      expect(codes(validateGraph(row.nodes, row.edges))).to.deep.equal(row.expected);
    });
  }

  it('names the nodes and edges of each problem', () => {
    const problems = validateGraph(table[12].nodes, table[12].edges);
    const byCode = (code: string) => problems.filter((p) => p.code === code);
    expect(byCode('DANGLING_EDGE')[0]).to.include({ edgeId: '2' }).and.to.have.deep.property('nodeIds', ['zz']);
    expect(byCode('SELF_LOOP')[0]).to.include({ edgeId: '1' });
    expect(byCode('DUPLICATE_EDGE')[0]).to.include({ edgeId: '5', duplicateOf: '3' });
    expect(byCode('CYCLE')[0].nodeIds).to.deep.equal(['b', 'c']);
    expect(byCode('UNREACHABLE_NODE').map((p) => p.nodeIds![0])).to.deep.equal(['b', 'c', 'd']);
    expect(byCode('CONDITION_TARGET_WITHOUT_EDGE')[0]).to.deep.include({ nodeIds: ['a', 'd'], conditionIndex: 0 });
    for (const p of problems) expect(p.message).to.be.a('string').and.not.equal('');
  });

  it('finds one ordered cycle per cyclic component, each edge of it real', () => {
    const nodes = ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => n(id));
    const edges = [edge('1', 'a', 'b'), edge('2', 'b', 'c'), edge('3', 'c', 'a'), edge('4', 'c', 'd'), edge('5', 'e', 'f'), edge('6', 'f', 'e'), edge('7', 'b', 'a')];
    const cycles = findCycles(nodes, edges);
    expect(cycles).to.have.length(2);
    for (const cycle of cycles) {
      cycle.forEach((from, i) => expect(edges.some((e) => e.source === from && e.target === cycle[(i + 1) % cycle.length]), `${from} → next`).to.equal(true));
    }
    expect(cycles.map((c) => c[0])).to.deep.equal(['a', 'e']);
    expect(cycles[0]).to.deep.equal(['a', 'b']); // the shortest way back
  });

  it('takes flagged start nodes, or else the nodes without incoming edges', () => {
    expect(startNodeIds([n('a'), n('b'), n('c')], [edge('1', 'a', 'b')])).to.deep.equal(['a', 'c']);
    expect(startNodeIds([n('a'), n('b', { startNode: true })], [edge('1', 'a', 'b')])).to.deep.equal(['b']);
    // A self-loop or a dangling edge does not make a node "have an incoming edge".
    expect(startNodeIds([n('a'), n('b')], [edge('1', 'a', 'a'), edge('2', 'zz', 'b')])).to.deep.equal(['a', 'b']);
  });

  it('handles a long chain and a large cycle without recursion limits', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => `n${i}`);
    const chain = ids.slice(1).map((id, i) => edge(`e${i}`, ids[i], id));
    expect(validateGraph(ids.map((id) => n(id)), chain)).to.deep.equal([]);
    const ring = [...chain, edge('back', ids[ids.length - 1], ids[0])];
    const problems = validateGraph(ids.map((id) => n(id)), ring);
    expect(problems.filter((p) => p.code === 'CYCLE')[0].nodeIds).to.have.length(5000);
  });
});
