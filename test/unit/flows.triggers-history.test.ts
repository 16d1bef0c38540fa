import { expect } from 'chai';
import type { DomainError } from '../../domain/shared/decider.js';
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
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(flowDecider);
const at = '2026-03-01T00:00:00.000Z';
const later = '2026-03-05T00:00:00.000Z';
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
    expect(spec.stateOf([created]).trigger).to.deep.equal(DEFAULT_TRIGGER);
    expect(toFlowView(spec.stateOf([created])).trigger).to.deep.equal({ enabled: false, allowedMethods: ['POST'], inputSchema: null, hasKey: false, keyCreatedAt: null });
  });

  it('updates the flow trigger partially; the event holds the whole settings; unchanged is no event', () => {
    const out = spec.given([created]).when({ type: 'UpdateFlowTrigger', enabled: true, inputSchema: { type: 'object' }, at: later }).events();
    expect(out).to.deep.equal([{ type: 'FlowTriggerUpdated', data: { enabled: true, allowedMethods: ['POST'], inputSchema: { type: 'object' }, at: later } }]);
    const events = [created, ...out];
    expect(spec.stateOf(events).trigger).to.include({ enabled: true });
    expect(spec.stateOf(events).updatedAt).to.equal(later);
    spec.given(events).when({ type: 'UpdateFlowTrigger', enabled: true, allowedMethods: ['POST'], at }).then([]);
    expect(spec.given(events).when({ type: 'UpdateFlowTrigger', inputSchema: null, at }).events()[0].data).to.include({ inputSchema: null, enabled: true });
  });

  it('refuses bad trigger settings naming the field', () => {
    expect(fieldsOf(spec.given([created]).when({ type: 'UpdateFlowTrigger', allowedMethods: [], at }).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.allowedMethods']);
    expect(fieldsOf(spec.given([created]).when({ type: 'UpdateFlowTrigger', allowedMethods: ['POST', 'POST'], at }).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal([
      'body.allowedMethods',
    ]);
    const bogus = { type: 'UpdateFlowTrigger', allowedMethods: ['TRACE'], at } as unknown as FlowCommand;
    expect(fieldsOf(spec.given([created]).when(bogus).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.allowedMethods.0']);
  });

  it('regenerates the flow key as a hash only; the view says hasKey and never shows the hash', () => {
    const out = spec.given([created]).when({ type: 'RegenerateFlowTriggerKey', keyHash: hash('a'), at: later }).events();
    expect(out).to.deep.equal([{ type: 'FlowTriggerKeyRegenerated', data: { keyHash: hash('a'), at: later } }]);
    const again = spec.given([created, ...out]).when({ type: 'RegenerateFlowTriggerKey', keyHash: hash('b'), at: later }).events();
    const state = spec.stateOf([created, ...out, ...again]);
    expect(state.trigger).to.include({ keyHash: hash('b'), keyCreatedAt: later });
    const view = toFlowView(state);
    expect(view.trigger).to.include({ hasKey: true });
    expect(JSON.stringify(view)).to.not.contain(hash('b'));
    spec.given([created]).when({ type: 'RegenerateFlowTriggerKey', keyHash: 'plain-key', at }).thenThrows('VALIDATION_FAILED', 'invalid');
  });

  it('keeps node triggers per node, independent of the flow trigger', () => {
    const out = spec.given([created]).when({ type: 'UpdateNodeTrigger', nodeId: 'a', enabled: true, allowedMethods: ['GET', 'POST'], at }).events();
    expect(out).to.deep.equal([{ type: 'NodeTriggerUpdated', data: { nodeId: 'a', enabled: true, allowedMethods: ['GET', 'POST'], inputSchema: null, at } }]);
    const keyed = spec.given([created, ...out]).when({ type: 'RegenerateNodeTriggerKey', nodeId: 'a', keyHash: hash('c'), at }).events();
    expect(keyed).to.deep.equal([{ type: 'NodeTriggerKeyRegenerated', data: { nodeId: 'a', keyHash: hash('c'), at } }]);
    const state = spec.stateOf([created, ...out, ...keyed]);
    expect(nodeTriggerOf(state, 'a')).to.deep.equal({ enabled: true, allowedMethods: ['GET', 'POST'], inputSchema: null, keyHash: hash('c'), keyCreatedAt: at });
    expect(nodeTriggerOf(state, 'b')).to.deep.equal(DEFAULT_TRIGGER);
    expect(state.trigger).to.deep.equal(DEFAULT_TRIGGER);
    // A key regenerated before any settings keeps the default settings.
    const keyOnly = spec.stateOf([created, ...spec.given([created]).when({ type: 'RegenerateNodeTriggerKey', nodeId: 'b', keyHash: hash('d'), at }).events()]);
    expect(nodeTriggerOf(keyOnly, 'b')).to.include({ enabled: false, keyHash: hash('d') });
  });

  it('refuses node triggers of unknown nodes and of missing flows', () => {
    spec.given([created]).when({ type: 'UpdateNodeTrigger', nodeId: 'zz', enabled: true, at }).thenThrows('NODE_NOT_FOUND', 'not_found');
    spec.given([created]).when({ type: 'RegenerateNodeTriggerKey', nodeId: 'zz', keyHash: hash('a'), at }).thenThrows('NODE_NOT_FOUND', 'not_found');
    spec.given([]).when({ type: 'UpdateFlowTrigger', enabled: true, at }).thenThrows('FLOW_NOT_FOUND', 'not_found');
    spec.given([]).when({ type: 'RegenerateFlowTriggerKey', keyHash: hash('a'), at }).thenThrows('FLOW_NOT_FOUND', 'not_found');
  });

  it('drops a node trigger with its node', () => {
    const events = [created, ...spec.given([created]).when({ type: 'RegenerateNodeTriggerKey', nodeId: 'a', keyHash: hash('a'), at }).events()];
    const state = spec.stateOf([...events, ...spec.given(events).when({ type: 'DeleteNode', nodeId: 'a', at }).events()]);
    expect(state.nodeTriggers).to.deep.equal({});
  });
});

describe('flow decider: node history', () => {
  it('records an execution; recording the same entry again is no event; history is no edit', () => {
    const out = spec.given([created]).when(record('a', 'h1', { error: null })).events();
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
    const state = spec.stateOf([created, ...out]);
    expect(historyOf(state, 'a').map((e) => e.entryId)).to.deep.equal(['h1']);
    expect(state.updatedAt).to.equal(at);
    expect(state.version).to.equal(1);
    spec.given([created, ...out]).when(record('a', 'h1')).then([]);
  });

  it('stores an oversized output as a truncated JSON preview, and absent output as null', () => {
    const big = { text: 'é'.repeat(MAX_HISTORY_OUTPUT_BYTES) };
    const [event] = spec.given([created]).when(record('a', 'h1', { output: big })).events();
    const entry = event.type === 'NodeExecutionRecorded' ? event.data.entry : expect.fail('wrong event');
    expect(entry.outputTruncated).to.equal(true);
    expect(entry.output).to.be.a('string');
    expect(new TextEncoder().encode(entry.output as string).length).to.be.at.most(MAX_HISTORY_OUTPUT_BYTES);
    expect((entry.output as string).startsWith('{"text":"éé')).to.equal(true);
    expect((entry.output as string).endsWith('\uFFFD')).to.equal(false);
    const [none] = spec.given([created]).when(record('a', 'h2', { output: undefined, status: 'failed', error: 'boom' })).events();
    expect(none.data).to.deep.nested.include({ 'entry.output': null, 'entry.error': 'boom', 'entry.status': 'failed' });
  });

  it('refuses a history entry for an unknown node, a bad one, or one that is not JSON', () => {
    spec.given([created]).when(record('zz', 'h1')).thenThrows('NODE_NOT_FOUND', 'not_found');
    spec.given([created]).when(record('a', 'h1', { executionTime: -1 })).thenThrows('VALIDATION_FAILED', 'invalid');
    spec.given([created]).when(record('a', 'h1', { output: { n: BigInt(1) } })).thenThrows('VALIDATION_FAILED', 'invalid');
  });

  it(`keeps the newest ${MAX_HISTORY_ENTRIES_PER_NODE} entries per node`, () => {
    const events = [created, ...Array.from({ length: MAX_HISTORY_ENTRIES_PER_NODE + 5 }, (_, i) => recorded('a', `h${i}`)), recorded('b', 'other')];
    const state = spec.stateOf(events);
    const ids = historyOf(state, 'a').map((e) => e.entryId);
    expect(ids).to.have.length(MAX_HISTORY_ENTRIES_PER_NODE);
    expect(ids[0]).to.equal('h5');
    expect(ids[ids.length - 1]).to.equal(`h${MAX_HISTORY_ENTRIES_PER_NODE + 4}`);
    expect(historyOf(state, 'b')).to.have.length(1);
  });

  it('deletes one entry; an unknown entry or node is 404', () => {
    const events = [created, recorded('a', 'h1'), recorded('a', 'h2')];
    const out = spec.given(events).when({ type: 'DeleteHistoryEntry', nodeId: 'a', entryId: 'h1', at }).events();
    expect(out).to.deep.equal([{ type: 'NodeHistoryEntryDeleted', data: { nodeId: 'a', entryId: 'h1', at } }]);
    expect(historyOf(spec.stateOf([...events, ...out]), 'a').map((e) => e.entryId)).to.deep.equal(['h2']);
    spec.given(events).when({ type: 'DeleteHistoryEntry', nodeId: 'a', entryId: 'nope', at }).thenThrows('HISTORY_ENTRY_NOT_FOUND', 'not_found');
    spec.given(events).when({ type: 'DeleteHistoryEntry', nodeId: 'b', entryId: 'h1', at }).thenThrows('HISTORY_ENTRY_NOT_FOUND', 'not_found');
    spec.given(events).when({ type: 'DeleteHistoryEntry', nodeId: 'zz', entryId: 'h1', at }).thenThrows('NODE_NOT_FOUND', 'not_found');
  });

  it("clears one node's history or the whole flow's; clearing nothing is no event", () => {
    const events = [created, recorded('a', 'h1'), recorded('b', 'h2')];
    const node = spec.given(events).when({ type: 'ClearNodeHistory', nodeId: 'a', at }).events();
    expect(node).to.deep.equal([{ type: 'NodeHistoryCleared', data: { nodeId: 'a', at } }]);
    const afterNode = spec.stateOf([...events, ...node]);
    expect(historyOf(afterNode, 'a')).to.deep.equal([]);
    expect(historyOf(afterNode, 'b')).to.have.length(1);
    spec.given([...events, ...node]).when({ type: 'ClearNodeHistory', nodeId: 'a', at }).then([]);
    spec.given(events).when({ type: 'ClearNodeHistory', nodeId: 'zz', at }).thenThrows('NODE_NOT_FOUND', 'not_found');
    const all = spec.given(events).when({ type: 'ClearFlowHistory', at }).events();
    expect(all).to.deep.equal([{ type: 'FlowHistoryCleared', data: { at } }]);
    expect(spec.stateOf([...events, ...all]).history).to.deep.equal({});
    spec.given([...events, ...all]).when({ type: 'ClearFlowHistory', at }).then([]);
  });

  it('drops a node history with its node', () => {
    const events = [created, recorded('a', 'h1')];
    expect(spec.stateOf([...events, ...spec.given(events).when({ type: 'DeleteNode', nodeId: 'a', at }).events()]).history).to.deep.equal({});
  });
});
