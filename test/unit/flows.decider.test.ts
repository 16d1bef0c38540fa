import { expect } from 'chai';
import type { DomainError } from '../../domain/shared/decider.js';
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
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(flowDecider);
const at = '2026-03-01T00:00:00.000Z';
const later = '2026-03-02T00:00:00.000Z';
const scope = { userId: 'u1', orgId: 'o1', workspaceId: 'w1' };

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
    spec.given([]).when(create).then([created]);
    spec.given([created]).when(create).thenThrows('FLOW_ALREADY_EXISTS', 'conflict');
    spec.given([created, deleted]).when(create).thenThrows('FLOW_ALREADY_EXISTS', 'conflict');
    expect(flowStreamId('f1')).to.equal('flow-f1');
  });

  it('creates a flow with an initial graph, validated like a replacement', () => {
    const out = spec.given([]).when({ ...create, nodes: [{ ...node('a') }, { ...node('b') }], edges: [edge('e1', 'a', 'b')] }).events();
    expect(out[0].type === 'FlowCreated' && out[0].data.nodes.map((n) => n.id)).to.deep.equal(['a', 'b']);
    spec.given([]).when({ ...create, nodes: [node('a')], edges: [edge('e1', 'a', 'a')] }).thenThrows('SELF_LOOP', 'invalid');
  });

  it('refuses a bad name or description naming the field', () => {
    expect(fieldsOf(spec.given([]).when({ ...create, name: ' ' }).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.name']);
    expect(fieldsOf(spec.given([]).when({ ...create, name: 'x'.repeat(201) }).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.name']);
    expect(fieldsOf(spec.given([]).when({ ...create, description: 'x'.repeat(2001) }).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.description']);
  });

  it('replaces name, description, nodes and edges in one event', () => {
    const replace: FlowCommand = { type: 'ReplaceFlow', name: 'New', description: 'd', nodes: [node('x'), node('y')], edges: [edge('e', 'x', 'y')], at: later };
    const out = spec.given([created, added('a')]).when(replace).events();
    expect(out).to.deep.equal([{ type: 'FlowReplaced', data: { name: 'New', description: 'd', nodes: [node('x'), node('y')], edges: [edge('e', 'x', 'y')], at: later } }]);
    const state = spec.stateOf([created, added('a'), ...out]);
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
    const fields = fieldsOf(spec.given([created]).when(bad).thenThrows('VALIDATION_FAILED', 'invalid'));
    expect(fields).to.have.members(['body.name', 'body.nodes.1.id', 'body.nodes.2.data.llm', 'body.nodes.3.id', 'body.edges.0.target', 'body.edges.1.id']);
    const cyclic: FlowCommand = { type: 'ReplaceFlow', name: 'n', nodes: [node('a'), node('b')], edges: [edge('1', 'a', 'b'), edge('2', 'b', 'a')], at };
    const err = spec.given([created]).when(cyclic).thenThrows('CYCLE', 'invalid');
    expect((err.details as { problems: unknown[] }).problems).to.have.length(1);
    spec.given([created]).when({ ...cyclic, edges: [edge('1', 'a', 'zz')] }).thenThrows('DANGLING_EDGE', 'invalid');
    spec.given([created]).when({ ...cyclic, edges: [edge('1', 'a', 'b'), edge('2', 'a', 'b')] }).thenThrows('DUPLICATE_EDGE', 'invalid');
  });

  it('keeps triggers and history of surviving node ids through a replacement, drops the others', () => {
    const hash = 'a'.repeat(64);
    const history = (nodeId: string): FlowEvent => ({
      type: 'NodeExecutionRecorded',
      data: { nodeId, entry: { entryId: `h-${nodeId}`, processId: 'p', status: 'completed', output: 'ok', outputTruncated: false, error: null, usage: null, executionTime: 1, at } },
    });
    const before = [created, added('a'), added('b'), history('a'), history('b'), { type: 'NodeTriggerKeyRegenerated', data: { nodeId: 'b', keyHash: hash, at } } as FlowEvent];
    const out = spec.given(before).when({ type: 'ReplaceFlow', name: 'n', nodes: [node('a')], edges: [], at }).events();
    const state = spec.stateOf([...before, ...out]);
    expect(Object.keys(state.history)).to.deep.equal(['a']);
    expect(state.nodeTriggers).to.deep.equal({});
  });

  it('deletes a flow; a deleted or missing flow answers FLOW_NOT_FOUND to every command', () => {
    spec.given([created]).when({ type: 'DeleteFlow', at }).then([deleted]);
    for (const events of [[], [created, deleted]]) {
      spec.given(events).when({ type: 'DeleteFlow', at }).thenThrows('FLOW_NOT_FOUND', 'not_found');
      spec.given(events).when({ type: 'RenameFlow', name: 'x', at }).thenThrows('FLOW_NOT_FOUND', 'not_found');
      spec.given(events).when({ type: 'AddNode', nodeId: 'n', node: seedNode, at }).thenThrows('FLOW_NOT_FOUND', 'not_found');
      spec.given(events).when({ type: 'ClearFlowHistory', at }).thenThrows('FLOW_NOT_FOUND', 'not_found');
    }
  });

  it('answers FLOW_NOT_FOUND outside the scope the command gives (another org, workspace, or owner of a personal flow)', () => {
    expect(spec.given([created]).when({ type: 'RenameFlow', name: 'x', at, scope }).events()).to.have.length(1);
    for (const other of [{ ...scope, orgId: 'o2' }, { ...scope, workspaceId: 'w2' }, { ...scope, orgId: null, workspaceId: null }]) {
      spec.given([created]).when({ type: 'RenameFlow', name: 'x', at, scope: other }).thenThrows('FLOW_NOT_FOUND', 'not_found');
    }
    const personal: FlowEvent = { type: 'FlowCreated', data: { ...(created.data as object), orgId: null, workspaceId: null } as never };
    const mine = { userId: 'u1', orgId: null, workspaceId: null };
    expect(spec.given([personal]).when({ type: 'ArchiveFlow', at, scope: mine }).events()).to.have.length(1);
    spec.given([personal]).when({ type: 'ArchiveFlow', at, scope: { ...mine, userId: 'u2' } }).thenThrows('FLOW_NOT_FOUND', 'not_found');
  });

  it('archives and unarchives; repeating either is no event', () => {
    const archived: FlowEvent = { type: 'FlowArchived', data: { at } };
    spec.given([created]).when({ type: 'ArchiveFlow', at }).then([archived]);
    spec.given([created, archived]).when({ type: 'ArchiveFlow', at }).then([]);
    spec.given([created, archived]).when({ type: 'UnarchiveFlow', at }).then([{ type: 'FlowUnarchived', data: { at } }]);
    spec.given([created]).when({ type: 'UnarchiveFlow', at }).then([]);
    expect(spec.stateOf([created, archived]).archived).to.equal(true);
  });

  it('renames, naming the previous name; the same name is no event; a bad name is refused', () => {
    spec.given([created]).when({ type: 'RenameFlow', name: ' Other ', at }).then([{ type: 'FlowRenamed', data: { name: 'Other', previousName: 'Flow', at } }]);
    spec.given([created]).when({ type: 'RenameFlow', name: 'Flow', at }).then([]);
    expect(fieldsOf(spec.given([created]).when({ type: 'RenameFlow', name: 'a\u0007b', at }).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.name']);
  });
});

describe('flow decider: nodes', () => {
  it('adds the seed node exactly as sent, unknown fields included', () => {
    const out = spec.given([created]).when({ type: 'AddNode', nodeId: 'n1', node: seedNode, at }).events();
    expect(out).to.deep.equal([{ type: 'NodeAdded', data: { node: { id: 'n1', ...seedNode }, duplicatedFrom: null, at } }]);
    expect(spec.stateOf([created, ...out]).nodes[0].data).to.deep.equal(seedNode.data);
  });

  it('refuses a taken id (409), a malformed id, and a node over the per-flow limit', () => {
    spec.given([created, added('n1')]).when({ type: 'AddNode', nodeId: 'n1', node: seedNode, at }).thenThrows('NODE_ID_TAKEN', 'conflict');
    expect(fieldsOf(spec.given([created]).when({ type: 'AddNode', nodeId: 'a b', node: seedNode, at }).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.id']);
    const full = [created, ...Array.from({ length: MAX_NODES_PER_FLOW }, (_, i) => added(`n${i}`))];
    const err = spec.given(full).when({ type: 'AddNode', nodeId: 'one-more', node: seedNode, at }).thenThrows('LIMIT_EXCEEDED', 'invalid');
    expect(err.details).to.deep.equal({ limit: 'nodesPerFlow', max: MAX_NODES_PER_FLOW, actual: MAX_NODES_PER_FLOW + 1 });
  });

  it('refuses an invalid node with every problem, fields named as in the body', () => {
    const bad: NodeInput = {
      type: '',
      position: { x: 1, y: Number.NaN },
      data: { nodeType: 'llm', llm: 'openai', model: 'gpt-9', prompt: '', conditions: [{ operator: 'like', value: 'x' }, { targetNodeId: 'n1', operator: 'is_empty' }] },
    };
    const err = spec.given([created]).when({ type: 'AddNode', nodeId: 'n1', node: bad, at }).thenThrows('VALIDATION_FAILED', 'invalid');
    expect(fieldsOf(err)).to.have.members(['body.type', 'body.position.y', 'body.data.model', 'body.data.prompt', 'body.data.conditions.0.operator', 'body.data.conditions.1.targetNodeId']);
  });

  it('accepts a condition targeting another node of the flow, refuses one targeting a stranger', () => {
    const withTarget = (target: string): NodeInput => ({ ...seedNode, data: { ...seedNode.data, conditions: [{ operator: 'contains', value: 'yes', targetNodeId: target }] } });
    expect(spec.given([created, added('a')]).when({ type: 'AddNode', nodeId: 'n1', node: withTarget('a'), at }).events()).to.have.length(1);
    const err = spec.given([created, added('a')]).when({ type: 'AddNode', nodeId: 'n1', node: withTarget('zz'), at }).thenThrows('VALIDATION_FAILED', 'invalid');
    expect(fieldsOf(err)).to.deep.equal(['body.data.conditions.0.targetNodeId']);
  });

  it('updates by partial merge of data; only what differs goes into the event', () => {
    const events = [created, added('n1', { ...llm, agentName: 'A', extra: 1 })];
    const out = spec.given(events).when({ type: 'UpdateNode', nodeId: 'n1', patch: { data: { prompt: 'New', agentName: 'A', other: true }, position: { x: 0, y: 0 } }, at: later }).events();
    expect(out).to.deep.equal([{ type: 'NodeUpdated', data: { nodeId: 'n1', data: { prompt: 'New', other: true }, at: later } }]);
    const n = spec.stateOf([...events, ...out]).nodes[0];
    expect(n.data).to.deep.equal({ ...llm, agentName: 'A', extra: 1, prompt: 'New', other: true });
    expect(spec.stateOf([...events, ...out]).updatedAt).to.equal(later);
  });

  it('moves and re-types a node without touching data; nothing to change is no event', () => {
    const events = [created, added('n1')];
    spec.given(events).when({ type: 'UpdateNode', nodeId: 'n1', patch: { position: { x: 5, y: 6 }, type: 'fancy' }, at }).then([
      { type: 'NodeUpdated', data: { nodeId: 'n1', type: 'fancy', position: { x: 5, y: 6 }, at } },
    ]);
    spec.given(events).when({ type: 'UpdateNode', nodeId: 'n1', patch: { data: { ...llm } }, at }).then([]);
  });

  it('validates the merged data when data changes, naming body fields; refuses unknown nodes', () => {
    const events = [created, added('n1')];
    const err = spec.given(events).when({ type: 'UpdateNode', nodeId: 'n1', patch: { data: { llm: 'anthropic' } }, at }).thenThrows('VALIDATION_FAILED', 'invalid');
    expect(fieldsOf(err)).to.deep.equal(['body.data.model']);
    const self = spec.given(events).when({ type: 'UpdateNode', nodeId: 'n1', patch: { data: { conditions: [{ operator: 'is_empty', targetNodeId: 'n1' }] } }, at }).thenThrows('VALIDATION_FAILED', 'invalid');
    expect(fieldsOf(self)).to.deep.equal(['body.data.conditions.0.targetNodeId']);
    expect(fieldsOf(spec.given(events).when({ type: 'UpdateNode', nodeId: 'n1', patch: { type: '' }, at }).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.type']);
    spec.given(events).when({ type: 'UpdateNode', nodeId: 'nope', patch: { data: { prompt: 'x' } }, at }).thenThrows('NODE_NOT_FOUND', 'not_found');
  });

  it('deletes a node with its edges and the conditions that pointed at it, in one event', () => {
    const router = { ...llm, conditions: [{ operator: 'contains', value: 'x', targetNodeId: 'b' }, { operator: 'is_empty', targetNodeId: 'c' }] };
    const events = [created, added('a', router), added('b'), added('c'), connected('e1', 'a', 'b'), connected('e2', 'a', 'c'), connected('e3', 'b', 'c')];
    const out = spec.given(events).when({ type: 'DeleteNode', nodeId: 'b', at }).events();
    expect(out).to.deep.equal([
      { type: 'NodeDeleted', data: { nodeId: 'b', removedEdgeIds: ['e1', 'e3'], updatedConditions: [{ nodeId: 'a', conditions: [router.conditions[1]] }], at } },
    ]);
    const state = spec.stateOf([...events, ...out]);
    expect(state.nodes.map((n) => n.id)).to.deep.equal(['a', 'c']);
    expect(state.edges.map((e) => e.id)).to.deep.equal(['e2']);
    expect(state.nodes[0].data.conditions).to.deep.equal([router.conditions[1]]);
    spec.given([...events, ...out]).when({ type: 'DeleteNode', nodeId: 'b', at }).thenThrows('NODE_NOT_FOUND', 'not_found');
  });

  it('duplicates a node: new id, offset position, data copied, no edges', () => {
    const events = [created, added('a', { ...llm, startNode: true }), added('b'), connected('e1', 'a', 'b')];
    const out = spec.given(events).when({ type: 'DuplicateNode', nodeId: 'a', newNodeId: 'a2', at }).events();
    expect(out).to.deep.equal([
      { type: 'NodeAdded', data: { node: { id: 'a2', type: 'custom', position: { x: 40, y: 40 }, data: { ...llm, startNode: true } }, duplicatedFrom: 'a', at } },
    ]);
    const state = spec.stateOf([...events, ...out]);
    expect(state.edges).to.have.length(1);
    expect(state.nodes[2].data).to.not.equal(state.nodes[0].data); // a copy, not a shared object
    expect(spec.given(events).when({ type: 'DuplicateNode', nodeId: 'a', newNodeId: 'a3', offset: { x: -5, y: 0 }, at }).events()[0].data).to.have.nested.property('node.position.x', -5);
    spec.given(events).when({ type: 'DuplicateNode', nodeId: 'zz', newNodeId: 'a2', at }).thenThrows('NODE_NOT_FOUND', 'not_found');
    spec.given(events).when({ type: 'DuplicateNode', nodeId: 'a', newNodeId: 'b', at }).thenThrows('NODE_ID_TAKEN', 'conflict');
  });
});
