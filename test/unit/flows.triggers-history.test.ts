import { expect } from 'chai';
import { DomainError, fold } from '../../domain/shared/decider.js';
import {
  DEFAULT_TRIGGER,
  MAX_HISTORY_ENTRIES_PER_NODE,
  MAX_HISTORY_OUTPUT_BYTES,
  flowDecider,
  historyOf,
  nodeTriggerOf,
  toFlowView,
  type FlowCommand,
  type FlowEvent,
  type FlowNode,
} from '../../domain/flows/index.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-03-01T00:00:00.000Z';
const later = '2026-03-05T00:00:00.000Z';
const given = (events: FlowEvent[]) => fold(flowDecider.evolve, flowDecider.initialState, events);
function when(events: FlowEvent[], command: FlowCommand): FlowEvent[] {
  const out = flowDecider.decide(command, given(events));
  for (const e of out) expect(flowDecider.eventSchemas[e.type].safeParse(e.data).success, `${e.type} matches its schema`).to.equal(true);
  return out;
}
function expectRejected(fn: () => unknown, code: string, status: number): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code, (err as DomainError).message).to.equal(code);
    expect(httpStatusOf(err as DomainError)).to.equal(status);
    return err as DomainError;
  }
  return expect.fail(`expected ${code}`);
}
const fieldsOf = (err: DomainError) => (err.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field);

const node = (id: string): FlowNode => ({ id, type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: '{{previous}}' } });
const created: FlowEvent = {
  type: 'FlowCreated',
  data: { flowId: 'f1', name: 'Flow', description: '', ownerId: 'u1', orgId: 'o1', workspaceId: 'w1', nodes: [node('a'), node('b')], edges: [], createdAt: at },
};
const hash = (c: string) => c.repeat(64);
const record = (nodeId: string, entryId: string, extra: Partial<Extract<FlowCommand, { type: 'RecordNodeExecution' }>> = {}): FlowCommand => ({
  type: 'RecordNodeExecution',
  nodeId,
  entryId,
  processId: 'p1',
  status: 'completed',
  output: { text: 'hi' },
  usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7, cost: 0.01 },
  executionTime: 12,
  at: later,
  ...extra,
});
const recorded = (nodeId: string, entryId: string): FlowEvent => ({
  type: 'NodeExecutionRecorded',
  data: { nodeId, entry: { entryId, processId: 'p1', status: 'completed', output: 'ok', outputTruncated: false, error: null, usage: null, executionTime: 1, at } },
});

describe('flow decider: triggers', () => {
  it('starts with the default trigger: off, POST, no schema, no key', () => {
    expect(given([created]).trigger).to.deep.equal(DEFAULT_TRIGGER);
    expect(toFlowView(given([created])).trigger).to.deep.equal({ enabled: false, allowedMethods: ['POST'], inputSchema: null, hasKey: false, keyCreatedAt: null });
  });

  it('updates the flow trigger partially; the event holds the whole settings; unchanged is no event', () => {
    const out = when([created], { type: 'UpdateFlowTrigger', enabled: true, inputSchema: { type: 'object' }, at: later });
    expect(out).to.deep.equal([{ type: 'FlowTriggerUpdated', data: { enabled: true, allowedMethods: ['POST'], inputSchema: { type: 'object' }, at: later } }]);
    const events = [created, ...out];
    expect(given(events).trigger).to.include({ enabled: true });
    expect(given(events).updatedAt).to.equal(later);
    expect(when(events, { type: 'UpdateFlowTrigger', enabled: true, allowedMethods: ['POST'], at })).to.deep.equal([]);
    expect(when(events, { type: 'UpdateFlowTrigger', inputSchema: null, at })[0].data).to.include({ inputSchema: null, enabled: true });
  });

  it('refuses bad trigger settings naming the field', () => {
    expect(fieldsOf(expectRejected(() => when([created], { type: 'UpdateFlowTrigger', allowedMethods: [], at }), 'VALIDATION_FAILED', 400))).to.deep.equal(['body.allowedMethods']);
    expect(fieldsOf(expectRejected(() => when([created], { type: 'UpdateFlowTrigger', allowedMethods: ['POST', 'POST'], at }), 'VALIDATION_FAILED', 400))).to.deep.equal([
      'body.allowedMethods',
    ]);
    const bogus = { type: 'UpdateFlowTrigger', allowedMethods: ['TRACE'], at } as unknown as FlowCommand;
    expect(fieldsOf(expectRejected(() => when([created], bogus), 'VALIDATION_FAILED', 400))).to.deep.equal(['body.allowedMethods.0']);
  });

  it('regenerates the flow key as a hash only; the view says hasKey and never shows the hash', () => {
    const out = when([created], { type: 'RegenerateFlowTriggerKey', keyHash: hash('a'), at: later });
    expect(out).to.deep.equal([{ type: 'FlowTriggerKeyRegenerated', data: { keyHash: hash('a'), at: later } }]);
    const again = when([created, ...out], { type: 'RegenerateFlowTriggerKey', keyHash: hash('b'), at: later });
    const state = given([created, ...out, ...again]);
    expect(state.trigger).to.include({ keyHash: hash('b'), keyCreatedAt: later });
    const view = toFlowView(state);
    expect(view.trigger).to.include({ hasKey: true });
    expect(JSON.stringify(view)).to.not.contain(hash('b'));
    expectRejected(() => when([created], { type: 'RegenerateFlowTriggerKey', keyHash: 'plain-key', at }), 'VALIDATION_FAILED', 400);
  });

  it('keeps node triggers per node, independent of the flow trigger', () => {
    const out = when([created], { type: 'UpdateNodeTrigger', nodeId: 'a', enabled: true, allowedMethods: ['GET', 'POST'], at });
    expect(out).to.deep.equal([{ type: 'NodeTriggerUpdated', data: { nodeId: 'a', enabled: true, allowedMethods: ['GET', 'POST'], inputSchema: null, at } }]);
    const keyed = when([created, ...out], { type: 'RegenerateNodeTriggerKey', nodeId: 'a', keyHash: hash('c'), at });
    expect(keyed).to.deep.equal([{ type: 'NodeTriggerKeyRegenerated', data: { nodeId: 'a', keyHash: hash('c'), at } }]);
    const state = given([created, ...out, ...keyed]);
    expect(nodeTriggerOf(state, 'a')).to.deep.equal({ enabled: true, allowedMethods: ['GET', 'POST'], inputSchema: null, keyHash: hash('c'), keyCreatedAt: at });
    expect(nodeTriggerOf(state, 'b')).to.deep.equal(DEFAULT_TRIGGER);
    expect(state.trigger).to.deep.equal(DEFAULT_TRIGGER);
    // A key regenerated before any settings keeps the default settings.
    const keyOnly = given([created, ...when([created], { type: 'RegenerateNodeTriggerKey', nodeId: 'b', keyHash: hash('d'), at })]);
    expect(nodeTriggerOf(keyOnly, 'b')).to.include({ enabled: false, keyHash: hash('d') });
  });

  it('refuses node triggers of unknown nodes and of missing flows', () => {
    expectRejected(() => when([created], { type: 'UpdateNodeTrigger', nodeId: 'zz', enabled: true, at }), 'NODE_NOT_FOUND', 404);
    expectRejected(() => when([created], { type: 'RegenerateNodeTriggerKey', nodeId: 'zz', keyHash: hash('a'), at }), 'NODE_NOT_FOUND', 404);
    expectRejected(() => when([], { type: 'UpdateFlowTrigger', enabled: true, at }), 'FLOW_NOT_FOUND', 404);
    expectRejected(() => when([], { type: 'RegenerateFlowTriggerKey', keyHash: hash('a'), at }), 'FLOW_NOT_FOUND', 404);
  });

  it('drops a node trigger with its node', () => {
    const events = [created, ...when([created], { type: 'RegenerateNodeTriggerKey', nodeId: 'a', keyHash: hash('a'), at })];
    const state = given([...events, ...when(events, { type: 'DeleteNode', nodeId: 'a', at })]);
    expect(state.nodeTriggers).to.deep.equal({});
  });
});

describe('flow decider: node history', () => {
  it('records an execution; recording the same entry again is no event; history is no edit', () => {
    const out = when([created], record('a', 'h1', { error: null }));
    expect(out).to.deep.equal([
      {
        type: 'NodeExecutionRecorded',
        data: {
          nodeId: 'a',
          entry: {
            entryId: 'h1',
            processId: 'p1',
            status: 'completed',
            output: { text: 'hi' },
            outputTruncated: false,
            error: null,
            usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7, cost: 0.01 },
            executionTime: 12,
            at: later,
          },
        },
      },
    ]);
    const state = given([created, ...out]);
    expect(historyOf(state, 'a').map((e) => e.entryId)).to.deep.equal(['h1']);
    expect(state.updatedAt).to.equal(at);
    expect(state.version).to.equal(1);
    expect(when([created, ...out], record('a', 'h1'))).to.deep.equal([]);
  });

  it('stores an oversized output as a truncated JSON preview, and absent output as null', () => {
    const big = { text: 'é'.repeat(MAX_HISTORY_OUTPUT_BYTES) };
    const [event] = when([created], record('a', 'h1', { output: big }));
    const entry = event.type === 'NodeExecutionRecorded' ? event.data.entry : expect.fail('wrong event');
    expect(entry.outputTruncated).to.equal(true);
    expect(entry.output).to.be.a('string');
    expect(new TextEncoder().encode(entry.output as string).length).to.be.at.most(MAX_HISTORY_OUTPUT_BYTES);
    expect((entry.output as string).startsWith('{"text":"éé')).to.equal(true);
    expect((entry.output as string).endsWith('\uFFFD')).to.equal(false);
    const [none] = when([created], record('a', 'h2', { output: undefined, status: 'failed', error: 'boom' }));
    expect(none.data).to.deep.nested.include({ 'entry.output': null, 'entry.error': 'boom', 'entry.status': 'failed' });
  });

  it('refuses a history entry for an unknown node, a bad one, or one that is not JSON', () => {
    expectRejected(() => when([created], record('zz', 'h1')), 'NODE_NOT_FOUND', 404);
    expectRejected(() => when([created], record('a', 'h1', { executionTime: -1 })), 'VALIDATION_FAILED', 400);
    expectRejected(() => when([created], record('a', 'h1', { output: { n: BigInt(1) } })), 'VALIDATION_FAILED', 400);
  });

  it(`keeps the newest ${MAX_HISTORY_ENTRIES_PER_NODE} entries per node`, () => {
    const events = [created, ...Array.from({ length: MAX_HISTORY_ENTRIES_PER_NODE + 5 }, (_, i) => recorded('a', `h${i}`)), recorded('b', 'other')];
    const state = given(events);
    const ids = historyOf(state, 'a').map((e) => e.entryId);
    expect(ids).to.have.length(MAX_HISTORY_ENTRIES_PER_NODE);
    expect(ids[0]).to.equal('h5');
    expect(ids[ids.length - 1]).to.equal(`h${MAX_HISTORY_ENTRIES_PER_NODE + 4}`);
    expect(historyOf(state, 'b')).to.have.length(1);
  });

  it('deletes one entry; an unknown entry or node is 404', () => {
    const events = [created, recorded('a', 'h1'), recorded('a', 'h2')];
    const out = when(events, { type: 'DeleteHistoryEntry', nodeId: 'a', entryId: 'h1', at });
    expect(out).to.deep.equal([{ type: 'NodeHistoryEntryDeleted', data: { nodeId: 'a', entryId: 'h1', at } }]);
    expect(historyOf(given([...events, ...out]), 'a').map((e) => e.entryId)).to.deep.equal(['h2']);
    expectRejected(() => when(events, { type: 'DeleteHistoryEntry', nodeId: 'a', entryId: 'nope', at }), 'HISTORY_ENTRY_NOT_FOUND', 404);
    expectRejected(() => when(events, { type: 'DeleteHistoryEntry', nodeId: 'b', entryId: 'h1', at }), 'HISTORY_ENTRY_NOT_FOUND', 404);
    expectRejected(() => when(events, { type: 'DeleteHistoryEntry', nodeId: 'zz', entryId: 'h1', at }), 'NODE_NOT_FOUND', 404);
  });

  it("clears one node's history or the whole flow's; clearing nothing is no event", () => {
    const events = [created, recorded('a', 'h1'), recorded('b', 'h2')];
    const node = when(events, { type: 'ClearNodeHistory', nodeId: 'a', at });
    expect(node).to.deep.equal([{ type: 'NodeHistoryCleared', data: { nodeId: 'a', at } }]);
    const afterNode = given([...events, ...node]);
    expect(historyOf(afterNode, 'a')).to.deep.equal([]);
    expect(historyOf(afterNode, 'b')).to.have.length(1);
    expect(when([...events, ...node], { type: 'ClearNodeHistory', nodeId: 'a', at })).to.deep.equal([]);
    expectRejected(() => when(events, { type: 'ClearNodeHistory', nodeId: 'zz', at }), 'NODE_NOT_FOUND', 404);
    const all = when(events, { type: 'ClearFlowHistory', at });
    expect(all).to.deep.equal([{ type: 'FlowHistoryCleared', data: { at } }]);
    expect(given([...events, ...all]).history).to.deep.equal({});
    expect(when([...events, ...all], { type: 'ClearFlowHistory', at })).to.deep.equal([]);
  });

  it('drops a node history with its node', () => {
    const events = [created, recorded('a', 'h1')];
    expect(given([...events, ...when(events, { type: 'DeleteNode', nodeId: 'a', at })]).history).to.deep.equal({});
  });
});
