import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { executeFlowCommand, type FlowWriteCommand } from '../../commands/flows.js';
import { handleCommand, loadState, type CommandContext, type WithoutAt } from '../../commands/handle.js';
import { configureSnapshots, findSnapshot, snapshotTag, stateAtRevision } from '../../commands/snapshots.js';
import { flowDecider, flowStreamId } from '../../domain/flows/index.js';
import { allRetentionPolicies } from '../../domain/retention.js';
import { fold, type Decider } from '../../domain/shared/decider.js';
import { SNAPSHOT_EVENT, SNAPSHOTS_KEPT, snapshotStreamId, type SnapshotData } from '../../domain/shared/snapshots.js';
import { workflowDecider, workflowStreamId, type WorkflowCommand } from '../../domain/workflows/index.js';
import { KafkaRelay } from '../../infra/bus/kafka-relay.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { createLogger } from '../../infra/logger/pino.js';
import type { EventStore, ReadStreamOptions } from '../../ports/event-store.js';
import { waitUntil } from '../support/wait.js';

const EVERY = 16;
const t = (second: number) => new Date(Date.UTC(2026, 2, 1) + second * 1000).toISOString();
const context = (second: number): CommandContext => ({
  actorId: 'u1', orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date(t(second)),
});

/** A flow edited for a while: nodes come and go, connections, triggers, history, renames. */
function flowEdits(rounds: number): FlowWriteCommand[] {
  const llm = (i: number) => ({ nodeType: 'llm', llm: 'offline', model: 'echo', prompt: `prompt ${i}` });
  const out: FlowWriteCommand[] = [{ type: 'CreateFlow', flowId: 'f1', name: 'Long', ownerId: 'u1', orgId: null, workspaceId: null } as FlowWriteCommand];
  for (let i = 0; i < rounds; i++) {
    out.push(
      { type: 'AddNode', nodeId: `a${i}`, node: { type: 'custom', position: { x: i, y: 0 }, data: llm(i) } },
      { type: 'AddNode', nodeId: `b${i}`, node: { type: 'custom', position: { x: i, y: 100 }, data: llm(i) } },
      { type: 'AddConnection', connectionId: `e${i}`, connection: { source: `a${i}`, target: `b${i}` } },
      { type: 'UpdateNode', nodeId: `a${i}`, patch: { position: { x: i, y: 50 }, data: { prompt: `edited ${i}` } } },
      { type: 'UpdateConnection', connectionId: `e${i}`, changes: { label: `label ${i}` } },
      { type: 'RecordNodeExecution', nodeId: `a${i}`, entryId: `h${i}`, processId: `p${i}`, status: 'completed', output: { i }, executionTime: i },
      { type: 'UpdateNodeTrigger', nodeId: `b${i}`, enabled: i % 2 === 0, allowedMethods: ['POST', 'GET'] },
      { type: 'RenameFlow', name: `Long ${i}` },
      { type: 'DuplicateNode', nodeId: `a${i}`, newNodeId: `c${i}` },
      { type: 'RegenerateFlowTriggerKey', keyHash: String(i % 10).repeat(64) },
    );
    if (i % 3 === 0) out.push({ type: 'DeleteNode', nodeId: `b${i}` });
    if (i % 4 === 0) out.push({ type: 'DeleteHistoryEntry', nodeId: `a${i}`, entryId: `h${i}` });
    if (i % 7 === 0) out.push({ type: 'UpdateFlowTrigger', enabled: i % 2 === 0, inputSchema: { type: 'object' } });
  }
  return out;
}

/** A workflow signalled for a long time: pending signals, duplicate request ids, user timers, pauses; then it finishes. */
function workflowLife(signals: number): Array<WithoutAt<WorkflowCommand>> {
  const out: Array<WithoutAt<WorkflowCommand>> = [
    {
      type: 'CreateWorkflow', workflowId: 'wf1', flowId: 'f1', flowVersion: 3, ownerId: 'u1', orgId: null, workspaceId: null, createdBy: 'u1',
      nodes: [
        { id: 'a', data: { nodeType: 'set_state', values: { stage: 'started' } } },
        { id: 'w', data: { nodeType: 'wait_signal', signalName: 'done' } },
        { id: 's', data: { nodeType: 'sleep', durationMs: 1000 } },
        { id: 'x', data: { nodeType: 'transform', template: 'done {{previous}}' } },
      ],
      edges: [{ id: 'e0', source: 'a', target: 'w' }, { id: 'e1', source: 'w', target: 's' }, { id: 'e2', source: 's', target: 'x' }],
      input: { n: 1 }, start: true, idempotencyPolicy: 'allow_duplicate', searchAttributes: { team: 'red' }, memo: { m: 1 },
    } as WithoutAt<WorkflowCommand>,
  ];
  for (let i = 0; i < signals; i++) {
    // Every 10th request id repeats an earlier one: recorded once.
    out.push({ type: 'SignalWorkflow', signalId: `g${i}`, name: 'tick', payload: { i }, requestId: `r${i % 10 === 9 ? i - 1 : i}`, by: 'u1' });
    if (i % 7 === 0) out.push({ type: 'ScheduleTimer', timerId: `t${i}`, name: `timer ${i}`, fireAt: t(0), signal: { name: 'tock', payload: i } });
    if (i % 7 === 3) out.push({ type: 'FireTimer', timerId: `t${i - 3}` });
    if (i % 11 === 5) out.push({ type: 'PauseWorkflow', by: 'u1', reason: `pause ${i}` }, { type: 'ResumeWorkflow', by: 'u1', reason: null });
  }
  out.push(
    { type: 'ScheduleTimer', timerId: 'never', name: 'never', fireAt: t(10_000_000), signal: null },
    { type: 'CancelTimer', timerId: 'never' },
    { type: 'SignalWorkflow', signalId: 'done', name: 'done', payload: 'yes', requestId: null, by: 'u1' },
    { type: 'FireTimer', timerId: 'sleep:s:1' },
    { type: 'StartNode', nodeId: 'x', workerId: 'w1' },
    { type: 'CompleteNode', nodeId: 'x', attempt: 1, output: 'done yes', executionTime: 5 },
  );
  return out;
}

/** A second store on the same file: another process, with no cached state and snapshots read back from disk. */
function otherProcess(file: string, every = EVERY): SqliteEventStore {
  const store = new SqliteEventStore(file, { retention: allRetentionPolicies, durability: 'process' });
  configureSnapshots(store, { every });
  return store;
}

/** `store` with its reads of `streamId` recorded (the options of each). */
function spying(store: EventStore, streamId: string, every = EVERY) {
  const reads: Array<ReadStreamOptions | undefined> = [];
  const readStream: EventStore['readStream'] = (id, options) => {
    if (id === streamId) reads.push(options);
    return store.readStream(id, options);
  };
  // A proxy, not Object.create: the store's methods must run on the store itself (its append queue).
  const spy = new Proxy(store, {
    get: (target, key) => {
      if (key === 'readStream') return readStream;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  configureSnapshots(spy, { every });
  return { spy, reads };
}

/** Folding from every kept snapshot, and from the handler's and time travel's choice of one, equals folding from zero. */
async function expectSnapshotsAgree<S>(file: string, streamId: string, decider: Decider<any, S, any>) {
  const store = otherProcess(file);
  try {
    const events = await store.readStream(streamId);
    const last = events.length - 1;
    const fromZero = (revision: number) => fold(decider.evolve, decider.initialState, events.slice(0, revision + 1) as never[]);
    const kept = await store.readStream(snapshotStreamId(streamId));
    expect(kept.length, 'snapshots kept').to.be.within(2, SNAPSHOTS_KEPT);
    const revisions = kept.map((e) => (e.data as SnapshotData).revision);
    for (const event of kept) {
      const data = event.data as SnapshotData;
      expect(event.type).to.equal(SNAPSHOT_EVENT);
      expect(data.tag).to.equal(snapshotTag(decider));
      expect(data.state, `snapshot at ${data.revision}`).to.deep.equal(fromZero(data.revision));
    }
    const newest = Math.max(...revisions);
    expect(last - newest, 'the newest snapshot is less than SNAPSHOT_EVERY behind').to.be.below(EVERY);

    const { spy, reads } = spying(store, streamId);
    const loaded = await loadState(spy, streamId, decider);
    expect(reads[0]?.fromRevision, 'the handler folds from the newest snapshot').to.equal(newest + 1);
    expect(loaded.revision).to.equal(last);
    expect(loaded.state).to.deep.equal(fromZero(last));

    const oldest = Math.min(...revisions);
    const probes = [0, 1, Math.floor(oldest / 2), oldest - 1, ...revisions, ...revisions.map((x) => x + 1), last - 1, last].filter((r) => r <= last);
    for (const r of new Set(probes)) {
      const at = await stateAtRevision(store, streamId, decider, r);
      expect(at.folded, `folded to ${r}`).to.equal(r);
      expect(at.state, `time travel to ${r}`).to.deep.equal(fromZero(r));
    }
    const beyond = await stateAtRevision(store, streamId, decider, last + 5);
    expect(beyond.folded, 'a revision past the end folds to the end').to.equal(last);
    expect(beyond.state).to.deep.equal(fromZero(last));
  } finally {
    await store.close();
  }
}

describe('snapshots of long streams', () => {
  let dir: string;
  let file: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'snapshots-'));
    file = join(dir, 'events.db');
    store = otherProcess(file);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const editFlow = async (commands: FlowWriteCommand[], on: EventStore = store) => {
    for (const [i, command] of commands.entries()) await executeFlowCommand(on, context(i), 'f1', command);
  };

  it('a flow edited hundreds of times: folding from a snapshot equals folding from zero', async () => {
    const commands = flowEdits(40);
    await editFlow(commands);
    expect((await store.readStream(flowStreamId('f1'))).length).to.be.above(400);
    await expectSnapshotsAgree(file, flowStreamId('f1'), flowDecider);
  });

  it('a workflow signalled hundreds of times: folding from a snapshot equals folding from zero', async () => {
    for (const [i, command] of workflowLife(300).entries()) {
      await handleCommand(store, { streamId: workflowStreamId('wf1'), decider: workflowDecider, command: { ...command, at: t(i) } as WorkflowCommand, context: context(i) });
    }
    const { state } = await loadState(store, workflowStreamId('wf1'), workflowDecider);
    expect(state.status).to.equal('COMPLETED');
    expect(state.pendingSignals.length).to.be.above(200);
    await expectSnapshotsAgree(file, workflowStreamId('wf1'), workflowDecider);
  });

  it('another process goes on editing from the snapshot, and its writes land as if it had folded from zero', async () => {
    await editFlow(flowEdits(5));
    const other = otherProcess(file);
    const { spy, reads } = spying(other, flowStreamId('f1'));
    try {
      const more: FlowWriteCommand[] = Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0 ? { type: 'AddNode', nodeId: `z${i}`, node: { type: 'custom', position: { x: i, y: 9 }, data: { nodeType: 'transform', template: 'x' } } } : { type: 'RenameFlow', name: `again ${i}` },
      );
      await editFlow(more, spy);
      expect(reads[0]?.fromRevision, 'its first load starts after a snapshot').to.be.above(0);
    } finally {
      await other.close();
    }
    await expectSnapshotsAgree(file, flowStreamId('f1'), flowDecider);
  });

  it('ignores a snapshot of another state version, another stream, or a broken one, and folds from further back', async () => {
    await editFlow(flowEdits(8));
    const streamId = flowStreamId('f1');
    const last = (await store.readStream(streamId)).length - 1;
    const genuine = (await findSnapshot(store, streamId, flowDecider))!;
    expect(genuine.revision).to.be.within(last - EVERY + 1, last);
    const metadata = { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: t(0) };
    const junk = (data: unknown) => ({ id: randomUUID(), type: SNAPSHOT_EVENT, data, metadata });
    const wrong = { exists: true, name: 'not what the log says' };
    await store.append(snapshotStreamId(streamId), [
      junk({ streamId, revision: last, tag: 'v0.0000000000000000', state: wrong }),
      junk({ streamId: flowStreamId('other'), revision: last, tag: snapshotTag(flowDecider), state: wrong }),
      junk({ streamId, revision: -1, tag: snapshotTag(flowDecider), state: wrong }),
      junk({ streamId, revision: last, tag: snapshotTag(flowDecider), state: 'not a state' }),
      junk(null),
    ], 'any');
    expect(await findSnapshot(store, streamId, flowDecider), 'the genuine one still wins').to.deep.equal(genuine);

    // The same aggregate one state version later: every snapshot is of the version before.
    const next = { ...flowDecider, stateVersion: flowDecider.stateVersion! + 1 };
    expect(snapshotTag(next)).to.not.equal(snapshotTag(flowDecider));
    expect(snapshotTag({ ...flowDecider, initialState: { ...flowDecider.initialState, added: 1 } }), 'a new field retires snapshots too').to.not.equal(snapshotTag(flowDecider));
    const reader = otherProcess(file);
    try {
      expect(await findSnapshot(reader, streamId, next)).to.equal(null);
      const { spy, reads } = spying(reader, streamId);
      const loaded = await loadState(spy, streamId, next);
      expect(reads[0]?.fromRevision, 'folded from zero').to.equal(undefined);
      expect(loaded.state).to.deep.equal(fold(flowDecider.evolve, flowDecider.initialState, (await reader.readStream(streamId)) as never[]));
      const at = await stateAtRevision(reader, streamId, next, last);
      expect(at.state).to.deep.equal(loaded.state);
    } finally {
      await reader.close();
    }
  });

  it('SNAPSHOT_EVERY=0 takes none, and short streams or deciders without a state version get none', async () => {
    const off = otherProcess(file, 0);
    try {
      await editFlow(flowEdits(4), off);
      expect(await off.readStream(snapshotStreamId(flowStreamId('f1')))).to.deep.equal([]);
      expect(await findSnapshot(off, flowStreamId('f1'), flowDecider)).to.equal(null);
    } finally {
      await off.close();
    }
    expect(snapshotTag({ ...flowDecider, stateVersion: undefined })).to.equal(null);
    await executeFlowCommand(store, context(0), 'f2', { type: 'CreateFlow', flowId: 'f2', name: 'Short', ownerId: 'u1', orgId: null, workspaceId: null } as FlowWriteCommand);
    expect(await store.readStream(snapshotStreamId(flowStreamId('f2')))).to.deep.equal([]);
  });

  it('the Kafka relay passes snapshots over: downstream subscribers see only domain events', async () => {
    await editFlow(flowEdits(3));
    const head = await store.headPosition();
    const sent: string[] = [];
    const fakeKafka = {
      admin: () => ({ connect: async () => {}, disconnect: async () => {}, listTopics: async () => [], createTopics: async () => true }),
      producer: () => ({
        connect: async () => {},
        disconnect: async () => {},
        sendBatch: async ({ topicMessages }: { topicMessages: Array<{ topic: string }> }) => {
          for (const { topic } of topicMessages) sent.push(topic);
        },
      }),
    } as unknown as Kafka;
    const positions = new Map<string, number>();
    const checkpoints = { get: async (k: string) => positions.get(k) ?? null, set: async (k: string, p: number) => void positions.set(k, p), delete: async () => {}, list: async () => [] };
    const relay = new KafkaRelay({ kafka: fakeKafka, eventStore: store, checkpoints, logger: createLogger('silent') });
    relay.start();
    try {
      await waitUntil(`the relay to publish up to ${head}`, () => relay.status().position >= head, 5_000, 10).catch((err: Error) => {
        throw new Error(`${err.message}: relay stuck at ${relay.status().position}`);
      });
    } finally {
      await relay.stop();
    }
    expect((await store.readStream(snapshotStreamId(flowStreamId('f1')))).length).to.be.above(0);
    expect(new Set(sent)).to.deep.equal(new Set(['flowsvc.events.flow']));
  });
});
