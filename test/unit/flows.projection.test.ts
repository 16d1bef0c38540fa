/**
 * The flow read model (projections/flows.ts) against the aggregate: whatever the events, the
 * document answers what `toFlowView(foldFlow(events))` says; redelivery changes nothing; history
 * and trigger keys follow their nodes. Runs on the embedded store, and on MongoDB/FerretDB when
 * MONGODB_URL is set (where user-shaped JSON must not become Mongo field names).
 */
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import {
  decideFlow,
  evolveFlow,
  flowStreamId,
  foldFlow,
  initialFlowState,
  MAX_HISTORY_ENTRIES_PER_NODE,
  toFlowView,
  toTriggerView,
  type FlowCommand,
  type FlowScope,
  type FlowState,
} from '../../domain/flows/index.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { ReadStore } from '../../ports/read-store.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { findMcpToolFlow, flowViewOf, flowsProjector, getFlow, getFlowJson, getTriggerKeyHash, listFlows, listMcpToolFlows, listNodeHistory } from '../../projections/flows.js';
import { onMongo } from '../support/on-mongo.js';

type Cmd = FlowCommand extends infer C ? (C extends unknown ? Omit<C, 'at'> : never) : never;

const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const alice: FlowScope = { userId: 'alice', orgId: null, workspaceId: null };
const bob: FlowScope = { userId: 'bob', orgId: null, workspaceId: null };
const orgA: FlowScope = { userId: 'carol', orgId: 'org-a', workspaceId: 'ws-a' };

/** A flow stream built through the real decider, as handleCommand would append it. */
class Stream {
  state: FlowState = initialFlowState;
  events: RecordedEvent[] = [];
  constructor(readonly flowId: string, private readonly positions: { next: number; clock: number }) {}

  do(command: Cmd): RecordedEvent[] {
    // One clock for all streams, so "most recently updated" is well defined across flows.
    const at = new Date((this.positions.clock += 1000)).toISOString();
    const decided = decideFlow({ ...command, at } as FlowCommand, this.state);
    const recorded = decided.map((e) => {
      this.state = evolveFlow(this.state, e);
      const r: RecordedEvent = {
        id: randomBytes(8).toString('hex'),
        type: e.type,
        streamId: flowStreamId(this.flowId),
        revision: this.events.length,
        position: ++this.positions.next,
        schemaVersion: 1,
        data: JSON.parse(JSON.stringify(e.data)),
        metadata: { actorId: 'alice', orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: at },
      };
      this.events.push(r);
      return r;
    });
    return recorded;
  }
}

const llmNode = (prompt: string) => ({ type: 'custom', position: { x: 1, y: 2 }, data: { nodeType: 'llm', llm: 'openai', model: 'gpt-4o', prompt } });

function suite(adapter: string, open: () => Promise<ReadStore>) {
  describe(`flows projection (${adapter})`, function () {
    this.timeout(30_000);
    let store: ReadStore;
    const positions = { next: 0, clock: Date.UTC(2025, 0, 1) };
    let n = 0;
    const newStream = (scope: FlowScope = alice) => {
      const s = new Stream(`f${++n}-${randomBytes(3).toString('hex')}`, positions);
      s.do({ type: 'CreateFlow', flowId: s.flowId, name: `flow ${n}`, ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId });
      return s;
    };
    const project = async (events: RecordedEvent[]) => {
      for (const e of events) await flowsProjector.project(e, store);
    };
    /** What the read model must say about a stream: the aggregate's own view. */
    const expectAgrees = async (s: Stream, scope: FlowScope = alice) => {
      const record = await getFlow(store, s.flowId, scope);
      expect(record, 'flow in the read model').to.not.equal(null);
      const folded = foldFlow(s.events);
      expect(flowViewOf(record!)).to.deep.equal(toFlowView(folded));
      const json = await getFlowJson(store, s.flowId, scope);
      expect(json!.version).to.equal(folded.version);
      expect(JSON.parse(json!.json)).to.deep.equal(toFlowView(folded));
      expect(record!.nodeTriggers).to.deep.equal(Object.fromEntries(Object.entries(folded.nodeTriggers).map(([id, t]) => [id, toTriggerView(t)])));
    };

    before(async () => {
      store = await open();
      await flowsProjector.setup(store);
    });
    after(async () => store?.close());

    it('agrees with the aggregate after every kind of edit, and skips redelivered events', async () => {
      const s = newStream();
      s.do({ type: 'AddNode', nodeId: 'a', node: llmNode('hello {{inputs.x}}') });
      s.do({ type: 'AddNode', nodeId: 'b', node: { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: '{{previous}}' } } });
      s.do({ type: 'AddConnection', connectionId: 'e1', connection: { source: 'a', target: 'b' } });
      s.do({ type: 'UpdateNode', nodeId: 'a', patch: { position: { x: 9, y: 9 }, data: { prompt: 'changed' } } });
      s.do({ type: 'DuplicateNode', nodeId: 'b', newNodeId: 'c' });
      s.do({ type: 'UpdateNode', nodeId: 'a', patch: { data: { conditions: [{ operator: 'contains', value: 'x', targetNodeId: 'c' }] } } });
      s.do({ type: 'RenameFlow', name: 'renamed' });
      s.do({ type: 'ArchiveFlow' });
      s.do({ type: 'UpdateFlowTrigger', enabled: true, allowedMethods: ['POST', 'GET'] });
      s.do({ type: 'RegenerateFlowTriggerKey', keyHash: hash('k1') });
      s.do({ type: 'UpdateNodeTrigger', nodeId: 'b', enabled: true });
      s.do({ type: 'DeleteNode', nodeId: 'c' });
      await project(s.events);
      await expectAgrees(s);
      const before = await getFlow(store, s.flowId, alice);
      // At-least-once delivery: the whole stream again, then an old event alone.
      await project(s.events);
      await project([s.events[3]]);
      expect(await getFlow(store, s.flowId, alice)).to.deep.equal(before);
      expect(before!.trigger.hasKey).to.equal(true);
      expect(JSON.stringify(before)).to.not.include(hash('k1'));
    });

    it("lists a tenant's exposed flows as MCP tools (not archived, not deleted, not another tenant's); the state folds back", async () => {
      const a = newStream(orgA);
      a.do({ type: 'UpdateFlowTrigger', inputSchema: { $schema: 'x', type: 'object', properties: { 'a.b': { type: 'string' } } } });
      a.do({ type: 'SetMcpExposure', enabled: true, toolName: 'alpha', description: 'Alpha', inputSchema: { $id: 'given', type: 'object' }, scope: orgA });
      const off = newStream(orgA);
      off.do({ type: 'SetMcpExposure', enabled: true, toolName: 'off', description: null, inputSchema: null });
      off.do({ type: 'SetMcpExposure', enabled: false, toolName: 'off', description: null, inputSchema: null });
      const archived = newStream(orgA);
      archived.do({ type: 'SetMcpExposure', enabled: true, toolName: 'archived', description: null, inputSchema: null });
      archived.do({ type: 'ArchiveFlow' });
      const gone = newStream(orgA);
      gone.do({ type: 'SetMcpExposure', enabled: true, toolName: 'gone', description: null, inputSchema: null });
      gone.do({ type: 'DeleteFlow' });
      const mine = newStream(alice);
      mine.do({ type: 'SetMcpExposure', enabled: true, toolName: 'personal', description: null, inputSchema: null });
      await project([...a.events, ...off.events, ...archived.events, ...gone.events, ...mine.events]);
      await project(a.events); // redelivered
      const tools = await listMcpToolFlows(store, orgA);
      expect(tools.map((t) => t.toolName)).to.deep.equal(['alpha']);
      expect(tools[0]).to.deep.include({ flowId: a.flowId, description: 'Alpha', givenInputSchema: { $id: 'given', type: 'object' } });
      expect(tools[0].triggerInputSchema).to.deep.equal({ $schema: 'x', type: 'object', properties: { 'a.b': { type: 'string' } } });
      expect((await listMcpToolFlows(store, alice)).map((t) => t.toolName)).to.deep.equal(['personal']);
      expect(await listMcpToolFlows(store, bob)).to.deep.equal([]);
      expect(await findMcpToolFlow(store, orgA, 'alpha')).to.not.equal(null);
      expect(await findMcpToolFlow(store, orgA, 'personal')).to.equal(null);
      expect(await findMcpToolFlow(store, bob, 'personal')).to.equal(null);
      await expectAgrees(a, orgA);
    });

    it('stores any JSON a node may carry ($-keys, dotted keys, nested arrays) without failing', async () => {
      const s = newStream();
      const data = {
        nodeType: 'transform',
        template: 'x',
        variables: { matrix: [[1, 2], [3]], 'a.b': { $ref: '#/x' }, $weird: true },
        webhookConfig: { url: 'https://example.test/h', method: 'POST', headers: { 'X.Dotted': 'sealed::v1.aXY.dGFn.Ym94' }, timeout: 1000 },
      };
      s.do({ type: 'AddNode', nodeId: 'n1', node: { type: 'custom', position: { x: 0, y: 0 }, data } });
      s.do({ type: 'UpdateFlowTrigger', enabled: true, inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', 'x.y': [[1]] } });
      s.do({ type: 'UpdateNodeTrigger', nodeId: 'n1', inputSchema: { $schema: 'x', enum: [[1], [2]] } });
      s.do({ type: 'RecordNodeExecution', nodeId: 'n1', entryId: 'e1', processId: 'p1', status: 'completed', output: { $out: [[1]], 'k.k': 1 }, usage: { $cost: 1 } as never, executionTime: 5 });
      await project(s.events);
      await expectAgrees(s);
      const page = await listNodeHistory(store, s.flowId, 'n1', { limit: 10 });
      expect(page.items.map((e) => e.output)).to.deep.equal([{ $out: [[1]], 'k.k': 1 }]);
    });

    it('hides deleted flows and other tenants\' flows; org flows are visible across the workspace', async () => {
      const mine = newStream();
      const theirs = newStream(bob);
      const org = newStream(orgA);
      mine.do({ type: 'RegenerateFlowTriggerKey', keyHash: hash('gone') });
      await project([...mine.events, ...theirs.events, ...org.events]);
      expect(await getFlow(store, theirs.flowId, alice)).to.equal(null);
      expect(await getFlowJson(store, theirs.flowId, alice)).to.equal(null);
      expect(await getFlow(store, mine.flowId, bob)).to.equal(null);
      expect(await getFlow(store, org.flowId, { ...orgA, userId: 'dave' })).to.not.equal(null);
      expect(await getFlow(store, org.flowId, { ...orgA, workspaceId: 'ws-other' })).to.equal(null);
      expect(await getFlow(store, org.flowId, { userId: 'carol', orgId: null, workspaceId: null }), 'owner outside the org').to.equal(null);
      expect(await getFlow(store, theirs.flowId, null), 'system access').to.not.equal(null);
      expect(await getTriggerKeyHash(store, mine.flowId, null)).to.equal(hash('gone'));
      await project(mine.do({ type: 'DeleteFlow' }));
      expect(await getFlow(store, mine.flowId, alice)).to.equal(null);
      expect(await getFlow(store, mine.flowId, null)).to.equal(null);
      expect(await getFlowJson(store, mine.flowId, null)).to.equal(null);
      expect(await getTriggerKeyHash(store, mine.flowId, null), 'a deleted flow keeps no key').to.equal(null);
      // Redelivering its creation does not bring it back.
      await project([mine.events[0]]);
      expect(await getFlow(store, mine.flowId, null)).to.equal(null);
    });

    it('lists the scope\'s flows newest first, filters archived, pages without repeats', async () => {
      const user: FlowScope = { userId: `lister-${adapter}`, orgId: null, workspaceId: null };
      const streams = Array.from({ length: 5 }, () => newStream(user));
      for (const s of streams) await project(s.events);
      // Touch the first (becomes newest), archive the second, delete the third.
      await project(streams[0].do({ type: 'RenameFlow', name: 'touched' }));
      await project(streams[1].do({ type: 'ArchiveFlow' }));
      await project(streams[2].do({ type: 'DeleteFlow' }));
      const all = await listFlows(store, user, { limit: 10 });
      expect(all.items.map((f) => f.id)).to.deep.equal([streams[1], streams[0], streams[4], streams[3]].map((s) => s.flowId));
      expect(all.nextCursor).to.equal(null);
      expect(all.items[0]).to.include({ archived: true, nodeCount: 0, edgeCount: 0, ownerId: user.userId });
      expect(all.items[0]).to.not.have.any.keys('definition', 'nodeTriggers', 'nodes');
      const archived = await listFlows(store, user, { limit: 10, archived: true });
      expect(archived.items.map((f) => f.id)).to.deep.equal([streams[1].flowId]);
      const active = await listFlows(store, user, { limit: 10, archived: false });
      expect(active.items).to.have.length(3);
      const first = await listFlows(store, user, { limit: 2 });
      const second = await listFlows(store, user, { limit: 2, cursor: first.nextCursor });
      expect([...first.items, ...second.items].map((f) => f.id)).to.deep.equal(all.items.map((f) => f.id));
      expect(second.nextCursor).to.equal(null);
      expect((await listFlows(store, { ...user, userId: 'nobody' }, { limit: 10 })).items).to.deep.equal([]);
    });

    it('keeps the newest history entries per node and follows deletes and clears', async () => {
      const s = newStream();
      s.do({ type: 'AddNode', nodeId: 'a', node: llmNode('p') });
      s.do({ type: 'AddNode', nodeId: 'b', node: llmNode('p') });
      const total = MAX_HISTORY_ENTRIES_PER_NODE + 5;
      for (let i = 0; i < total; i++) {
        s.do({ type: 'RecordNodeExecution', nodeId: 'a', entryId: `e${i}`, processId: `p${i}`, status: 'completed', output: i, executionTime: i });
      }
      s.do({ type: 'RecordNodeExecution', nodeId: 'b', entryId: 'b0', processId: 'p', status: 'failed', output: null, error: 'boom', executionTime: 1 });
      await project(s.events);
      const pages: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await listNodeHistory(store, s.flowId, 'a', { limit: 30, cursor });
        pages.push(...page.items.map((e) => e.entryId));
        cursor = page.nextCursor;
      } while (cursor);
      const expected = foldFlow(s.events).history.a.map((e) => e.entryId).reverse();
      expect(pages).to.deep.equal(expected);
      expect(pages).to.have.length(MAX_HISTORY_ENTRIES_PER_NODE);
      expect(pages[0]).to.equal(`e${total - 1}`);

      await project(s.do({ type: 'DeleteHistoryEntry', nodeId: 'a', entryId: `e${total - 1}` }));
      expect((await listNodeHistory(store, s.flowId, 'a', { limit: 1 })).items[0].entryId).to.equal(`e${total - 2}`);
      await project(s.do({ type: 'ClearNodeHistory', nodeId: 'a' }));
      expect((await listNodeHistory(store, s.flowId, 'a', { limit: 10 })).items).to.deep.equal([]);
      expect((await listNodeHistory(store, s.flowId, 'b', { limit: 10 })).items).to.have.length(1);
      await project(s.do({ type: 'ClearFlowHistory' }));
      expect((await listNodeHistory(store, s.flowId, 'b', { limit: 10 })).items).to.deep.equal([]);
      // History moves the version but not updatedAt (the list order is about edits).
      await expectAgrees(s);
    });

    it('drops a node\'s key and history when the node goes (delete or replace)', async () => {
      const s = newStream();
      for (const id of ['a', 'b', 'c']) s.do({ type: 'AddNode', nodeId: id, node: llmNode('p') });
      for (const id of ['a', 'b', 'c']) {
        s.do({ type: 'RegenerateNodeTriggerKey', nodeId: id, keyHash: hash(id) });
        s.do({ type: 'RecordNodeExecution', nodeId: id, entryId: `${id}1`, processId: 'p', status: 'completed', output: 'x', executionTime: 1 });
      }
      s.do({ type: 'RegenerateNodeTriggerKey', nodeId: 'a', keyHash: hash('a2') });
      await project(s.events);
      expect(await getTriggerKeyHash(store, s.flowId, 'a')).to.equal(hash('a2'));
      expect(await getTriggerKeyHash(store, s.flowId, null)).to.equal(null);
      await project(s.do({ type: 'DeleteNode', nodeId: 'b' }));
      expect(await getTriggerKeyHash(store, s.flowId, 'b')).to.equal(null);
      expect((await listNodeHistory(store, s.flowId, 'b', { limit: 10 })).items).to.deep.equal([]);
      const keep = foldFlow(s.events).nodes.filter((n) => n.id === 'a');
      await project(s.do({ type: 'ReplaceFlow', name: 'replaced', nodes: keep, edges: [] }));
      expect(await getTriggerKeyHash(store, s.flowId, 'c')).to.equal(null);
      expect((await listNodeHistory(store, s.flowId, 'c', { limit: 10 })).items).to.deep.equal([]);
      expect(await getTriggerKeyHash(store, s.flowId, 'a'), 'surviving node keeps its key').to.equal(hash('a2'));
      expect((await listNodeHistory(store, s.flowId, 'a', { limit: 10 })).items).to.have.length(1);
      await expectAgrees(s);
    });

    it('ignores a stray event for a flow it never saw created', async () => {
      const s = newStream();
      const [added] = s.do({ type: 'AddNode', nodeId: 'a', node: llmNode('p') });
      await project([added]);
      expect(await getFlow(store, s.flowId, null)).to.equal(null);
    });
  });
}

suite('memory', async () => new MemoryReadStore());

onMongo('flows projection on MongoDB', 'unit_flows', (connect) => suite('mongodb', () => connect()));
