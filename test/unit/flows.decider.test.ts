import { expect } from 'chai';
import { DomainError, fold } from '../../domain/shared/decider.js';
import {
  MAX_NODES_PER_FLOW,
  flowDecider,
  flowStreamId,
  type FlowCommand,
  type FlowEdge,
  type FlowEvent,
  type FlowNode,
  type NodeInput,
} from '../../domain/flows/index.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-03-01T00:00:00.000Z';
const later = '2026-03-02T00:00:00.000Z';
const scope = { userId: 'u1', orgId: 'o1', workspaceId: 'w1' };

const given = (events: FlowEvent[]) => fold(flowDecider.evolve, flowDecider.initialState, events);
/** Decides, and checks every produced event against its schema as the command handler does. */
function when(events: FlowEvent[], command: FlowCommand): FlowEvent[] {
  const out = flowDecider.decide(command, given(events));
  for (const e of out) {
    const parsed = flowDecider.eventSchemas[e.type].safeParse(e.data);
    expect(parsed.success, `${e.type} matches its schema: ${parsed.error?.message}`).to.equal(true);
  }
  return out;
}
function rejection(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return err as DomainError;
  }
  return expect.fail('expected a rejection');
}
function expectRejected(fn: () => unknown, code: string, status: number): DomainError {
  const err = rejection(fn);
  expect(err.code, err.message).to.equal(code);
  expect(httpStatusOf(err)).to.equal(status);
  return err;
}
const fieldsOf = (err: DomainError) => (err.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field);

const llm = { nodeType: 'llm', llm: 'openai', model: 'gpt-4o', prompt: 'Hello {{inputs.name}}' };
const node = (id: string, data: Record<string, unknown> = llm, position = { x: 0, y: 0 }): FlowNode => ({ id, type: 'custom', position, data });
const edge = (id: string, source: string, target: string): FlowEdge => ({ id, source, target });
const created: FlowEvent = {
  type: 'FlowCreated',
  data: { flowId: 'f1', name: 'Flow', description: '', ownerId: 'u1', orgId: 'o1', workspaceId: 'w1', nodes: [], edges: [], createdAt: at },
};
const added = (id: string, data: Record<string, unknown> = llm): FlowEvent => ({ type: 'NodeAdded', data: { node: node(id, data), duplicatedFrom: null, at } });
const connected = (id: string, s: string, t: string): FlowEvent => ({ type: 'ConnectionAdded', data: { edge: edge(id, s, t), at } });
const deleted: FlowEvent = { type: 'FlowDeleted', data: { at } };

/** The seed's add-node body, with a field the service has never heard of. */
const seedNode: NodeInput = {
  type: 'custom',
  position: { x: 100, y: 200 },
  data: {
    agentName: 'Summarizer',
    llm: 'openai',
    model: 'gpt-4o-mini',
    prompt: 'Summarize {{inputs.text}}',
    agentObjective: 'short summaries',
    nodeType: 'llm',
    isAsync: false,
    startNode: true,
    url: '',
    conditions: [],
    webhookConfig: { url: '', method: 'POST', headers: {}, timeout: 30000 },
    variables: { tone: 'dry' },
    uiColor: { r: 1, tags: ['a'] },
  },
};

describe('flow decider: flows', () => {
  const create: FlowCommand = { type: 'CreateFlow', flowId: 'f1', name: '  Flow ', ownerId: 'u1', orgId: 'o1', workspaceId: 'w1', at };

  it('creates a flow (name trimmed, empty graph) and refuses the same id twice, even deleted', () => {
    expect(when([], create)).to.deep.equal([created]);
    expectRejected(() => when([created], create), 'FLOW_ALREADY_EXISTS', 409);
    expectRejected(() => when([created, deleted], create), 'FLOW_ALREADY_EXISTS', 409);
    expect(flowStreamId('f1')).to.equal('flow-f1');
  });

  it('creates a flow with an initial graph, validated like a replacement', () => {
    const out = when([], { ...create, nodes: [{ ...node('a') }, { ...node('b') }], edges: [edge('e1', 'a', 'b')] });
    expect(out[0].type === 'FlowCreated' && out[0].data.nodes.map((n) => n.id)).to.deep.equal(['a', 'b']);
    expectRejected(() => when([], { ...create, nodes: [node('a')], edges: [edge('e1', 'a', 'a')] }), 'SELF_LOOP', 400);
  });

  it('refuses a bad name or description naming the field', () => {
    expect(fieldsOf(expectRejected(() => when([], { ...create, name: ' ' }), 'VALIDATION_FAILED', 400))).to.deep.equal(['body.name']);
    expect(fieldsOf(expectRejected(() => when([], { ...create, name: 'x'.repeat(201) }), 'VALIDATION_FAILED', 400))).to.deep.equal(['body.name']);
    expect(fieldsOf(expectRejected(() => when([], { ...create, description: 'x'.repeat(2001) }), 'VALIDATION_FAILED', 400))).to.deep.equal(['body.description']);
  });

  it('replaces name, description, nodes and edges in one event', () => {
    const replace: FlowCommand = { type: 'ReplaceFlow', name: 'New', description: 'd', nodes: [node('x'), node('y')], edges: [edge('e', 'x', 'y')], at: later };
    const out = when([created, added('a')], replace);
    expect(out).to.deep.equal([{ type: 'FlowReplaced', data: { name: 'New', description: 'd', nodes: [node('x'), node('y')], edges: [edge('e', 'x', 'y')], at: later } }]);
    const state = given([created, added('a'), ...out]);
    expect(state.nodes.map((n) => n.id)).to.deep.equal(['x', 'y']);
    expect(state.updatedAt).to.equal(later);
  });

  it('refuses a replacement with every field problem at once, and structural problems by their code', () => {
    const bad: FlowCommand = {
      type: 'ReplaceFlow',
      name: '',
      nodes: [node('a'), node('a'), { ...node('c'), data: { nodeType: 'llm', llm: 'nope', model: 'm', prompt: 'p' } }, node('_bad')],
      edges: [{ id: 'e1', source: 'a', target: '' }, edge('e1', 'a', 'c')],
      at,
    };
    const fields = fieldsOf(expectRejected(() => when([created], bad), 'VALIDATION_FAILED', 400));
    expect(fields).to.have.members(['body.name', 'body.nodes.1.id', 'body.nodes.2.data.llm', 'body.nodes.3.id', 'body.edges.0.target', 'body.edges.1.id']);
    const cyclic: FlowCommand = { type: 'ReplaceFlow', name: 'n', nodes: [node('a'), node('b')], edges: [edge('1', 'a', 'b'), edge('2', 'b', 'a')], at };
    const err = expectRejected(() => when([created], cyclic), 'CYCLE', 400);
    expect((err.details as { problems: unknown[] }).problems).to.have.length(1);
    expectRejected(() => when([created], { ...cyclic, edges: [edge('1', 'a', 'zz')] }), 'DANGLING_EDGE', 400);
    expectRejected(() => when([created], { ...cyclic, edges: [edge('1', 'a', 'b'), edge('2', 'a', 'b')] }), 'DUPLICATE_EDGE', 400);
  });

  it('keeps triggers and history of surviving node ids through a replacement, drops the others', () => {
    const hash = 'a'.repeat(64);
    const history = (nodeId: string): FlowEvent => ({
      type: 'NodeExecutionRecorded',
      data: { nodeId, entry: { entryId: `h-${nodeId}`, processId: 'p', status: 'completed', output: 'ok', outputTruncated: false, error: null, usage: null, executionTime: 1, at } },
    });
    const before = [created, added('a'), added('b'), history('a'), history('b'), { type: 'NodeTriggerKeyRegenerated', data: { nodeId: 'b', keyHash: hash, at } } as FlowEvent];
    const out = when(before, { type: 'ReplaceFlow', name: 'n', nodes: [node('a')], edges: [], at });
    const state = given([...before, ...out]);
    expect(Object.keys(state.history)).to.deep.equal(['a']);
    expect(state.nodeTriggers).to.deep.equal({});
  });

  it('deletes a flow; a deleted or missing flow answers FLOW_NOT_FOUND to every command', () => {
    expect(when([created], { type: 'DeleteFlow', at })).to.deep.equal([deleted]);
    for (const events of [[], [created, deleted]]) {
      expectRejected(() => when(events, { type: 'DeleteFlow', at }), 'FLOW_NOT_FOUND', 404);
      expectRejected(() => when(events, { type: 'RenameFlow', name: 'x', at }), 'FLOW_NOT_FOUND', 404);
      expectRejected(() => when(events, { type: 'AddNode', nodeId: 'n', node: seedNode, at }), 'FLOW_NOT_FOUND', 404);
      expectRejected(() => when(events, { type: 'ClearFlowHistory', at }), 'FLOW_NOT_FOUND', 404);
    }
  });

  it('answers FLOW_NOT_FOUND outside the scope the command gives (another org, workspace, or owner of a personal flow)', () => {
    expect(when([created], { type: 'RenameFlow', name: 'x', at, scope })).to.have.length(1);
    for (const other of [{ ...scope, orgId: 'o2' }, { ...scope, workspaceId: 'w2' }, { ...scope, orgId: null, workspaceId: null }]) {
      expectRejected(() => when([created], { type: 'RenameFlow', name: 'x', at, scope: other }), 'FLOW_NOT_FOUND', 404);
    }
    const personal: FlowEvent = { type: 'FlowCreated', data: { ...(created.data as object), orgId: null, workspaceId: null } as never };
    const mine = { userId: 'u1', orgId: null, workspaceId: null };
    expect(when([personal], { type: 'ArchiveFlow', at, scope: mine })).to.have.length(1);
    expectRejected(() => when([personal], { type: 'ArchiveFlow', at, scope: { ...mine, userId: 'u2' } }), 'FLOW_NOT_FOUND', 404);
  });

  it('archives and unarchives; repeating either is no event', () => {
    const archived: FlowEvent = { type: 'FlowArchived', data: { at } };
    expect(when([created], { type: 'ArchiveFlow', at })).to.deep.equal([archived]);
    expect(when([created, archived], { type: 'ArchiveFlow', at })).to.deep.equal([]);
    expect(when([created, archived], { type: 'UnarchiveFlow', at })).to.deep.equal([{ type: 'FlowUnarchived', data: { at } }]);
    expect(when([created], { type: 'UnarchiveFlow', at })).to.deep.equal([]);
    expect(given([created, archived]).archived).to.equal(true);
  });

  it('renames, naming the previous name; the same name is no event; a bad name is refused', () => {
    expect(when([created], { type: 'RenameFlow', name: ' Other ', at })).to.deep.equal([{ type: 'FlowRenamed', data: { name: 'Other', previousName: 'Flow', at } }]);
    expect(when([created], { type: 'RenameFlow', name: 'Flow', at })).to.deep.equal([]);
    expect(fieldsOf(expectRejected(() => when([created], { type: 'RenameFlow', name: 'a\u0007b', at }), 'VALIDATION_FAILED', 400))).to.deep.equal(['body.name']);
  });
});

describe('flow decider: nodes', () => {
  it('adds the seed node exactly as sent, unknown fields included', () => {
    const out = when([created], { type: 'AddNode', nodeId: 'n1', node: seedNode, at });
    expect(out).to.deep.equal([{ type: 'NodeAdded', data: { node: { id: 'n1', ...seedNode }, duplicatedFrom: null, at } }]);
    expect(given([created, ...out]).nodes[0].data).to.deep.equal(seedNode.data);
  });

  it('refuses a taken id (409), a malformed id, and a node over the per-flow limit', () => {
    expectRejected(() => when([created, added('n1')], { type: 'AddNode', nodeId: 'n1', node: seedNode, at }), 'NODE_ID_TAKEN', 409);
    expect(fieldsOf(expectRejected(() => when([created], { type: 'AddNode', nodeId: 'a b', node: seedNode, at }), 'VALIDATION_FAILED', 400))).to.deep.equal(['body.id']);
    const full = [created, ...Array.from({ length: MAX_NODES_PER_FLOW }, (_, i) => added(`n${i}`))];
    const err = expectRejected(() => when(full, { type: 'AddNode', nodeId: 'one-more', node: seedNode, at }), 'LIMIT_EXCEEDED', 400);
    expect(err.details).to.deep.equal({ limit: 'nodesPerFlow', max: MAX_NODES_PER_FLOW, actual: MAX_NODES_PER_FLOW + 1 });
  });

  it('refuses an invalid node with every problem, fields named as in the body', () => {
    const bad: NodeInput = {
      type: '',
      position: { x: 1, y: Number.NaN },
      data: { nodeType: 'llm', llm: 'openai', model: 'gpt-9', prompt: '', conditions: [{ operator: 'like', value: 'x' }, { targetNodeId: 'n1', operator: 'is_empty' }] },
    };
    const err = expectRejected(() => when([created], { type: 'AddNode', nodeId: 'n1', node: bad, at }), 'VALIDATION_FAILED', 400);
    expect(fieldsOf(err)).to.have.members(['body.type', 'body.position.y', 'body.data.model', 'body.data.prompt', 'body.data.conditions.0.operator', 'body.data.conditions.1.targetNodeId']);
  });

  it('accepts a condition targeting another node of the flow, refuses one targeting a stranger', () => {
    const withTarget = (target: string): NodeInput => ({ ...seedNode, data: { ...seedNode.data, conditions: [{ operator: 'contains', value: 'yes', targetNodeId: target }] } });
    expect(when([created, added('a')], { type: 'AddNode', nodeId: 'n1', node: withTarget('a'), at })).to.have.length(1);
    const err = expectRejected(() => when([created, added('a')], { type: 'AddNode', nodeId: 'n1', node: withTarget('zz'), at }), 'VALIDATION_FAILED', 400);
    expect(fieldsOf(err)).to.deep.equal(['body.data.conditions.0.targetNodeId']);
  });

  it('updates by partial merge of data; only what differs goes into the event', () => {
    const events = [created, added('n1', { ...llm, agentName: 'A', extra: 1 })];
    const out = when(events, { type: 'UpdateNode', nodeId: 'n1', patch: { data: { prompt: 'New', agentName: 'A', other: true }, position: { x: 0, y: 0 } }, at: later });
    expect(out).to.deep.equal([{ type: 'NodeUpdated', data: { nodeId: 'n1', data: { prompt: 'New', other: true }, at: later } }]);
    const n = given([...events, ...out]).nodes[0];
    expect(n.data).to.deep.equal({ ...llm, agentName: 'A', extra: 1, prompt: 'New', other: true });
    expect(given([...events, ...out]).updatedAt).to.equal(later);
  });

  it('moves and re-types a node without touching data; nothing to change is no event', () => {
    const events = [created, added('n1')];
    expect(when(events, { type: 'UpdateNode', nodeId: 'n1', patch: { position: { x: 5, y: 6 }, type: 'fancy' }, at })).to.deep.equal([
      { type: 'NodeUpdated', data: { nodeId: 'n1', type: 'fancy', position: { x: 5, y: 6 }, at } },
    ]);
    expect(when(events, { type: 'UpdateNode', nodeId: 'n1', patch: { data: { ...llm } }, at })).to.deep.equal([]);
  });

  it('validates the merged data when data changes, naming body fields; refuses unknown nodes', () => {
    const events = [created, added('n1')];
    const err = expectRejected(() => when(events, { type: 'UpdateNode', nodeId: 'n1', patch: { data: { llm: 'anthropic' } }, at }), 'VALIDATION_FAILED', 400);
    expect(fieldsOf(err)).to.deep.equal(['body.data.model']);
    const self = expectRejected(() => when(events, { type: 'UpdateNode', nodeId: 'n1', patch: { data: { conditions: [{ operator: 'is_empty', targetNodeId: 'n1' }] } }, at }), 'VALIDATION_FAILED', 400);
    expect(fieldsOf(self)).to.deep.equal(['body.data.conditions.0.targetNodeId']);
    expect(fieldsOf(expectRejected(() => when(events, { type: 'UpdateNode', nodeId: 'n1', patch: { type: '' }, at }), 'VALIDATION_FAILED', 400))).to.deep.equal(['body.type']);
    expectRejected(() => when(events, { type: 'UpdateNode', nodeId: 'nope', patch: { data: { prompt: 'x' } }, at }), 'NODE_NOT_FOUND', 404);
  });

  it('deletes a node with its edges and the conditions that pointed at it, in one event', () => {
    const router = { ...llm, conditions: [{ operator: 'contains', value: 'x', targetNodeId: 'b' }, { operator: 'is_empty', targetNodeId: 'c' }] };
    const events = [created, added('a', router), added('b'), added('c'), connected('e1', 'a', 'b'), connected('e2', 'a', 'c'), connected('e3', 'b', 'c')];
    const out = when(events, { type: 'DeleteNode', nodeId: 'b', at });
    expect(out).to.deep.equal([
      { type: 'NodeDeleted', data: { nodeId: 'b', removedEdgeIds: ['e1', 'e3'], updatedConditions: [{ nodeId: 'a', conditions: [router.conditions[1]] }], at } },
    ]);
    const state = given([...events, ...out]);
    expect(state.nodes.map((n) => n.id)).to.deep.equal(['a', 'c']);
    expect(state.edges.map((e) => e.id)).to.deep.equal(['e2']);
    expect(state.nodes[0].data.conditions).to.deep.equal([router.conditions[1]]);
    expectRejected(() => when([...events, ...out], { type: 'DeleteNode', nodeId: 'b', at }), 'NODE_NOT_FOUND', 404);
  });

  it('duplicates a node: new id, offset position, data copied, no edges', () => {
    const events = [created, added('a', { ...llm, startNode: true }), added('b'), connected('e1', 'a', 'b')];
    const out = when(events, { type: 'DuplicateNode', nodeId: 'a', newNodeId: 'a2', at });
    expect(out).to.deep.equal([
      { type: 'NodeAdded', data: { node: { id: 'a2', type: 'custom', position: { x: 40, y: 40 }, data: { ...llm, startNode: true } }, duplicatedFrom: 'a', at } },
    ]);
    const state = given([...events, ...out]);
    expect(state.edges).to.have.length(1);
    expect(state.nodes[2].data).to.not.equal(state.nodes[0].data); // a copy, not a shared object
    expect(when(events, { type: 'DuplicateNode', nodeId: 'a', newNodeId: 'a3', offset: { x: -5, y: 0 }, at })[0].data).to.have.nested.property('node.position.x', -5);
    expectRejected(() => when(events, { type: 'DuplicateNode', nodeId: 'zz', newNodeId: 'a2', at }), 'NODE_NOT_FOUND', 404);
    expectRejected(() => when(events, { type: 'DuplicateNode', nodeId: 'a', newNodeId: 'b', at }), 'NODE_ID_TAKEN', 409);
  });
});
