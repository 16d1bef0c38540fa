import { expect } from 'chai';
import {
  flowAtVersion,
  flowDecider,
  foldFlow,
  toFlowView,
  type FlowCommand,
  type FlowEvent,
  type FlowState,
} from '../../domain/flows/index.js';
import type { RecordedEvent } from '../../domain/shared/events.js';

const t = (minute: number) => `2026-03-01T00:${String(minute).padStart(2, '0')}:00.000Z`;
const llm = { nodeType: 'llm', llm: 'offline', model: 'echo', prompt: 'p' };
const node = (id: string, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data: { ...llm } });

/** A session of edits, each decided on the state the previous ones produced (as the handler does). */
const script: FlowCommand[] = [
  { type: 'CreateFlow', flowId: 'f1', name: 'Flow', ownerId: 'u1', orgId: 'o1', workspaceId: 'w1', at: t(0) },
  { type: 'AddNode', nodeId: 'a', node: node('a'), at: t(1) },
  { type: 'AddNode', nodeId: 'b', node: node('b', 100), at: t(2) },
  { type: 'AddConnections', connections: [{ connectionId: 'e1', connection: { source: 'a', target: 'b' } }], at: t(3) },
  { type: 'UpdateNode', nodeId: 'a', patch: { data: { conditions: [{ operator: 'contains', value: 'yes', targetNodeId: 'b' }] } }, at: t(4) },
  { type: 'DuplicateNode', nodeId: 'b', newNodeId: 'c', at: t(5) },
  { type: 'AddConnection', connectionId: 'e2', connection: { source: 'b', target: 'c' }, at: t(6) },
  { type: 'UpdateFlowTrigger', enabled: true, at: t(7) },
  { type: 'RegenerateFlowTriggerKey', keyHash: 'f'.repeat(64), at: t(8) },
  { type: 'RecordNodeExecution', nodeId: 'a', entryId: 'h1', processId: 'p1', status: 'completed', output: 'yes', executionTime: 3, at: t(9) },
  { type: 'RenameFlow', name: 'Renamed', at: t(10) },
  { type: 'DeleteNode', nodeId: 'b', at: t(11) },
  { type: 'ArchiveFlow', at: t(12) },
  { type: 'UpdateNodeTrigger', nodeId: 'a', allowedMethods: ['GET'], at: t(13) },
  { type: 'DeleteFlow', at: t(14) },
];

function run(commands: FlowCommand[]) {
  let state = flowDecider.initialState;
  const events: FlowEvent[] = [];
  const afterEachWrite: FlowState[] = [];
  for (const command of commands) {
    const out = flowDecider.decide(command, state);
    for (const e of out) state = flowDecider.evolve(state, e);
    events.push(...out);
    afterEachWrite.push(state);
  }
  return { events, afterEachWrite };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

describe('flow fold and time travel', () => {
  const { events, afterEachWrite } = run(script);

  it('gives every write a version equal to the stream revision of its last event', () => {
    // Version after write k = (events appended so far) - 1.
    let count = 0;
    for (const [i, command] of script.entries()) {
      count += flowDecider.decide(command, i === 0 ? flowDecider.initialState : afterEachWrite[i - 1]).length;
      expect(afterEachWrite[i].version, command.type).to.equal(count - 1);
    }
    expect(afterEachWrite[afterEachWrite.length - 1].version).to.equal(events.length - 1);
  });

  it('folds the whole stream to the state the writes produced', () => {
    expect(foldFlow(events)).to.deep.equal(afterEachWrite[afterEachWrite.length - 1]);
  });

  it('rebuilds the state after every write from the first version + 1 events', () => {
    for (const [i, state] of afterEachWrite.entries()) {
      expect(flowAtVersion(events, state.version), `after ${script[i].type}`).to.deep.equal(state);
    }
  });

  it('answers null for a version the stream does not have', () => {
    expect(flowAtVersion(events, events.length)).to.equal(null);
    expect(flowAtVersion(events, -1)).to.equal(null);
    expect(flowAtVersion(events, 1.5)).to.equal(null);
    expect(flowAtVersion([], 0)).to.equal(null);
  });

  it('folds recorded events from the store the same way', () => {
    const recorded: RecordedEvent[] = events.map((e, revision) => ({
      id: `id${revision}`,
      type: e.type,
      streamId: 'flow-f1',
      revision,
      position: revision * 3,
      schemaVersion: 1,
      data: JSON.parse(JSON.stringify(e.data)),
      metadata: { actorId: 'u1', orgId: 'o1', workspaceId: 'w1', correlationId: 'c', causationId: null, requestId: null, occurredAt: t(0) },
    }));
    expect(foldFlow(recorded)).to.deep.equal(foldFlow(events));
  });

  it('shows the public view of a version: no history, no key hash, the graph as it was', () => {
    const beforeDelete = afterEachWrite[10];
    const view = toFlowView(beforeDelete);
    expect(view).to.deep.include({ id: 'f1', name: 'Renamed', archived: false, version: beforeDelete.version, ownerId: 'u1', orgId: 'o1', workspaceId: 'w1', createdAt: t(0), updatedAt: t(10) });
    expect(view.nodes.map((n) => n.id)).to.deep.equal(['a', 'b', 'c']);
    expect(view.edges.map((e) => e.id)).to.deep.equal(['e1', 'e2']);
    expect(view.trigger).to.deep.equal({ enabled: true, allowedMethods: ['POST'], inputSchema: null, hasKey: true, keyCreatedAt: t(8) });
    expect(view).to.not.have.any.keys('history', 'nodeTriggers', 'exists', 'deleted');
    expect(JSON.stringify(view)).to.not.contain('f'.repeat(64));
    const after = toFlowView(afterEachWrite[11]);
    expect(after.nodes.map((n) => n.id)).to.deep.equal(['a', 'c']);
    expect(after.edges).to.deep.equal([]);
    expect(after.nodes[0].data.conditions).to.deep.equal([]);
  });

  it('keeps the deleted flag in the version that deleted the flow', () => {
    expect(afterEachWrite[afterEachWrite.length - 1].deleted).to.equal(true);
    expect(flowAtVersion(events, events.length - 2)!.deleted).to.equal(false);
  });

  it('never mutates the state it evolves (folded states are cached between commands)', () => {
    let state = deepFreeze(structuredClone(flowDecider.initialState));
    for (const e of events) state = deepFreeze(flowDecider.evolve(state, e));
    expect(state.version).to.equal(events.length - 1);
  });

  it('counts an unknown event type in the version without changing anything else', () => {
    const state = foldFlow(events.slice(0, 3));
    const next = flowDecider.evolve(state, { type: 'SomethingFromTheFuture', data: {} } as unknown as FlowEvent);
    expect(next).to.deep.equal({ ...state, version: state.version + 1 });
  });

  it('every event of the session matches its schema after a JSON round trip', () => {
    for (const e of events) expect(flowDecider.eventSchemas[e.type].safeParse(JSON.parse(JSON.stringify(e.data))).success, e.type).to.equal(true);
    expect(new Set(events.map((e) => e.type)).size).to.be.at.least(12);
  });
});
