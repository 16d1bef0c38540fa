/**
 * The runs read model (projections/runs.ts, collection `processes`) against the aggregate: after
 * every event the document's view is what `runStateView(foldRun(events))` says, the query fields
 * follow, a redelivered old event changes nothing, and outputs with `$`/dotted keys survive (they
 * live in the `state` JSON text, never as Mongo field names, which FerretDB refuses). Runs on the
 * memory store, and on MongoDB/FerretDB when MONGODB_URL is set.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { FlowScope } from '../../domain/flows/index.js';
import { decideRun, evolveRun, foldRun, initialRunState, runStreamId, type RunCommand, type RunState } from '../../domain/runs/index.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { ReadStore } from '../../ports/read-store.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import {
  activeFlowProcesses,
  getProcess,
  latestFlowProcess,
  listFlowProcesses,
  listRunningProcesses,
  processView,
  runRecoveryQueries,
  runStateView,
  runsProjector,
} from '../../projections/runs.js';
import { onMongo } from '../support/on-mongo.js';

type Cmd = RunCommand extends infer C ? (C extends unknown ? Omit<C, 'at'> : never) : never;

const alice: FlowScope = { userId: 'alice', orgId: null, workspaceId: null };
const bob: FlowScope = { userId: 'bob', orgId: null, workspaceId: null };
const WORKER = 'worker-1';
/** User-shaped output Mongo could not take as field names. */
const nastyOutput = { $set: { 'a.b': 1 }, 'dotted.key': ['$x', { '$y.z': null }], plain: 'ok' };

const transform = (id: string, template: string) => ({ id, type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template } });

/** A run stream built through the real decider, as handleCommand would append it. */
class RunStream {
  state: RunState = initialRunState;
  events: RecordedEvent[] = [];
  constructor(
    readonly processId: string,
    private readonly clock: { position: number; ms: number },
  ) {}

  do(command: Cmd): RecordedEvent[] {
    const at = new Date((this.clock.ms += 1000)).toISOString();
    return decideRun({ ...command, at } as RunCommand, this.state).map((e) => {
      this.state = evolveRun(this.state, e);
      const r: RecordedEvent = {
        id: randomBytes(8).toString('hex'),
        type: e.type,
        streamId: runStreamId(this.processId),
        revision: this.events.length,
        position: ++this.clock.position,
        schemaVersion: 1,
        data: JSON.parse(JSON.stringify(e.data)),
        metadata: { actorId: 'alice', orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: at },
      };
      this.events.push(r);
      return r;
    });
  }
}

/** `event`: `project` one event at a time; `batch`: `projectBatch` with the events given together. */
type Mode = 'event' | 'batch';

function suite(adapter: string, open: () => Promise<ReadStore>, mode: Mode) {
  describe(`runs projection (${adapter}, ${mode} by ${mode})`, function () {
    this.timeout(30_000);
    let store: ReadStore;
    const clock = { position: 0, ms: Date.UTC(2025, 0, 1) };
    let n = 0;
    const flowId = `flow-${randomBytes(4).toString('hex')}`;

    const newRun = (opts: { owner?: FlowScope; key?: string | null; edges?: boolean } = {}) => {
      const owner = opts.owner ?? alice;
      const s = new RunStream(`p${++n}-${randomBytes(3).toString('hex')}`, clock);
      s.do({
        type: 'RequestRun',
        processId: s.processId,
        flowId,
        flowVersion: 3,
        ownerId: owner.userId,
        orgId: owner.orgId,
        workspaceId: owner.workspaceId,
        mode: 'flow',
        nodes: [transform('a', 'hello {{inputs.who}}'), transform('b', 'then {{previous}}')],
        edges: opts.edges === false ? [] : [{ id: 'e1', source: 'a', target: 'b' }],
        inputs: { who: 'world', 'dotted.input': { $in: 1 } },
        async: true,
        requestedBy: owner.userId,
        source: 'api',
        idempotencyKey: opts.key ?? null,
      });
      return s;
    };
    const project = async (events: RecordedEvent[]) => {
      if (mode === 'batch') return runsProjector.projectBatch!(events, store);
      for (const e of events) await runsProjector.project(e, store);
    };
    /** The document says what the aggregate says, field for field. */
    const expectAgrees = async (s: RunStream) => {
      const doc = await getProcess(store, s.processId, null);
      expect(doc, 'process in the read model').to.not.equal(null);
      const folded = foldRun(s.events);
      expect(processView(doc!)).to.deep.equal(JSON.parse(JSON.stringify(runStateView(s.processId, folded))));
      expect(doc).to.include({ flowId, status: folded.status, version: folded.version, workerId: folded.workerId, startedAt: folded.startedAt, finishedAt: folded.finishedAt });
      return doc!;
    };

    before(async () => {
      store = await open();
      await runsProjector.setup(store);
    });
    after(async () => store?.close());

    it('follows a run step by step: queued, running, node results, completed', async () => {
      const s = newRun({ key: 'key-1' });
      await project(s.events);
      expect((await expectAgrees(s)).status).to.equal('queued');
      expect((await activeFlowProcesses(store, flowId)).map((d) => d._id)).to.include(s.processId);

      await project(s.do({ type: 'ClaimRun', workerId: WORKER }));
      expect((await expectAgrees(s)).status).to.equal('running');

      await project(s.do({ type: 'StartNode', workerId: WORKER, nodeId: 'a' }));
      expect(processView(await expectAgrees(s)).nodes[0].status).to.equal('running');

      await project(s.do({ type: 'CompleteNode', workerId: WORKER, nodeId: 'a', output: nastyOutput, metadata: { 'x.y': '$z' }, usage: { total_tokens: 3, cost: 0 }, executionTime: 2 }));
      const afterA = processView(await expectAgrees(s));
      expect(afterA.nodes[0]).to.include({ status: 'completed' });
      expect(afterA.nodes[0].output, 'a $/dotted output survives').to.deep.equal(nastyOutput);
      expect(afterA.nodes[0].metadata).to.deep.equal({ 'x.y': '$z' });

      await project(s.do({ type: 'StartNode', workerId: WORKER, nodeId: 'b' }));
      await expectAgrees(s);
      const last = s.do({ type: 'CompleteNode', workerId: WORKER, nodeId: 'b', output: 'then hello world', executionTime: 1 });
      expect(last.map((e) => e.type), 'the decider ends the run after the last node').to.include('RunCompleted');
      await project(last);
      const done = await expectAgrees(s);
      expect(done.status).to.equal('completed');
      expect(processView(done).usage.total_tokens).to.equal(3);
      expect((await activeFlowProcesses(store, flowId)).map((d) => d._id)).to.not.include(s.processId);
      expect(done.idempotencyKey, 'the Idempotency-Key the run was started with').to.equal('key-1');
    });

    it('ignores a redelivered old event, and a whole redelivered stream', async () => {
      const s = newRun();
      s.do({ type: 'ClaimRun', workerId: WORKER });
      s.do({ type: 'StartNode', workerId: WORKER, nodeId: 'a' });
      await project(s.events);
      const before = await expectAgrees(s);
      await project([s.events[0]]); // RunRequested again: would reset the run to queued
      await project([s.events[s.events.length - 1]]);
      expect(await getProcess(store, s.processId, null)).to.deep.equal(before);
      await project(s.events);
      expect(await getProcess(store, s.processId, null)).to.deep.equal(before);
      // Events after the redelivery still land.
      await project(s.do({ type: 'FailNode', workerId: WORKER, nodeId: 'a', error: { code: 'BOOM', message: 'failed' }, executionTime: 1 }));
      const failed = await expectAgrees(s);
      expect(failed.status).to.equal('failed');
      expect(processView(failed).nodes[0].error).to.deep.equal({ code: 'BOOM', message: 'failed' });
    });

    it('stop: running, then stopped; running lists and tenant scope follow', async () => {
      const s = newRun({ owner: bob });
      s.do({ type: 'ClaimRun', workerId: WORKER });
      await project(s.events);
      const running = await listRunningProcesses(store, bob, { limit: 50 });
      expect(running.items.map((d) => d._id)).to.include(s.processId);
      expect((await listRunningProcesses(store, alice, { limit: 50 })).items.map((d) => d._id)).to.not.include(s.processId);
      expect(await getProcess(store, s.processId, alice), "another user's run is not visible").to.equal(null);
      expect(await getProcess(store, s.processId, bob)).to.not.equal(null);

      await project(s.do({ type: 'RequestStop', by: 'bob' }));
      expect(processView(await expectAgrees(s)).stopRequested).to.equal(true);
      await project(s.do({ type: 'ConfirmStop', workerId: WORKER }));
      expect((await expectAgrees(s)).status).to.equal('stopped');
      expect((await listRunningProcesses(store, bob, { limit: 50 })).items.map((d) => d._id)).to.not.include(s.processId);
    });

    it('timed out: the run leaves the active lists; the deadline sweep finds queued and running runs by request time', async () => {
      const queries = runRecoveryQueries(store);
      const queued = newRun({ edges: false });
      const running = newRun();
      running.do({ type: 'ClaimRun', workerId: WORKER });
      running.do({ type: 'StartNode', workerId: WORKER, nodeId: 'a' });
      await project([...queued.events, ...running.events]);
      const ids = (runs: Array<{ processId: string }>) => runs.map((r) => r.processId).filter((id) => id === queued.processId || id === running.processId);
      const cutoff = (s: RunStream) => s.state.requestedAt;
      expect(ids(await queries.overdueRuns('queued', cutoff(running), 1_000))).to.deep.equal([queued.processId]);
      expect(ids(await queries.overdueRuns('running', cutoff(running), 1_000))).to.deep.equal([running.processId]);
      expect(ids(await queries.overdueRuns('running', new Date(Date.parse(cutoff(running)) - 1).toISOString(), 1_000)), 'requested after the cutoff').to.deep.equal([]);

      const timedOut = running.do({ type: 'TimeOutRun', timeoutMs: 1 });
      expect(timedOut.map((e) => e.type)).to.deep.equal(['RunTimedOut']);
      await project(timedOut);
      const doc = await expectAgrees(running);
      expect(doc.status).to.equal('timed_out');
      const view = processView(doc);
      expect(view.error).to.include({ code: 'RUN_TIMED_OUT' });
      expect(view.nodes[0]).to.include({ status: 'failed' });
      expect(view.nodes[0].error).to.deep.equal({ code: 'ABORTED', message: 'the run ended while this node ran' });
      expect(ids(await queries.overdueRuns('running', cutoff(running), 1_000))).to.deep.equal([]);
      expect((await activeFlowProcesses(store, flowId)).map((d) => d._id)).to.not.include(running.processId);
    });

    it('flow history: newest first, paginated; latest is the newest request', async () => {
      const runs = [newRun({ edges: false }), newRun({ edges: false }), newRun({ edges: false })];
      for (const r of runs) await project(r.events);
      const first = await listFlowProcesses(store, flowId, { limit: 2 });
      expect(first.items).to.have.length(2);
      expect(first.nextCursor).to.be.a('string');
      const rest = await listFlowProcesses(store, flowId, { limit: 50, cursor: first.nextCursor });
      const all = [...first.items, ...rest.items].map((d) => d.requestedAt);
      expect(all).to.deep.equal([...all].sort().reverse());
      expect((await latestFlowProcess(store, flowId))?._id).to.equal(runs[2].processId);
    });

    if (mode === 'batch') {
      /** Several runs' streams interleaved in log order, as a subscription delivers them. */
      const interleaved = (count: number) => {
        const runs = Array.from({ length: count }, (_, i) => newRun({ edges: i % 2 === 0 }));
        for (const r of runs) r.do({ type: 'ClaimRun', workerId: WORKER });
        for (const r of runs) r.do({ type: 'StartNode', workerId: WORKER, nodeId: 'a' });
        for (const [i, r] of runs.entries()) {
          if (i % 3 === 0) r.do({ type: 'FailNode', workerId: WORKER, nodeId: 'a', error: { code: 'BOOM', message: 'x' }, executionTime: 1 });
          else r.do({ type: 'CompleteNode', workerId: WORKER, nodeId: 'a', output: { i, ...nastyOutput }, executionTime: 1 });
        }
        return { runs, events: runs.flatMap((r) => r.events).sort((a, b) => a.position - b.position) };
      };
      const chunks = <T>(list: T[], sizes: number[]) => {
        const out: T[][] = [];
        for (let i = 0, k = 0; i < list.length; k++) out.push(list.slice(i, (i += sizes[k % sizes.length])));
        return out;
      };

      it('batches of any size leave what projecting event by event leaves', async () => {
        const { runs, events } = interleaved(7);
        for (const batch of chunks(events, [1, 5, 2, 13, 3])) await project(batch);
        for (const r of runs) await expectAgrees(r);
        // Projected again, in other batches: nothing changes.
        const before = await Promise.all(runs.map((r) => getProcess(store, r.processId, null)));
        for (const batch of chunks(events, [4, 9])) await project(batch);
        expect(await Promise.all(runs.map((r) => getProcess(store, r.processId, null)))).to.deep.equal(before);
      });

      it('a batch that failed part-way, projected again from the last checkpoint, leaves the same read model', async () => {
        const { runs, events } = interleaved(6);
        const [first, second] = chunks(events, [8, events.length]);
        await project(first);
        // The bulk write dies after its first two writes (a crash, a lost connection).
        const failing: ReadStore = Object.create(store, {
          collection: {
            value: (name: string) => {
              const c = store.collection(name);
              return Object.assign(Object.create(c), {
                async bulkWrite(ops: Parameters<typeof c.bulkWrite>[0]) {
                  await c.bulkWrite(ops.slice(0, 2));
                  throw new Error('connection lost');
                },
              });
            },
          },
        });
        const err = await runsProjector.projectBatch!(second, failing).catch((e: Error) => e);
        expect(err).to.be.instanceOf(Error).with.property('message', 'connection lost');
        // Replayed from the checkpoint (after `first`), in one batch and then once more.
        await project(second);
        for (const r of runs) await expectAgrees(r);
        await project(events);
        for (const r of runs) await expectAgrees(r);
      });

      it('the cached state is a base only while the stored version is the one this process wrote', async () => {
        const s = newRun();
        s.do({ type: 'ClaimRun', workerId: WORKER });
        await project(s.events);
        // Another projector process (another store handle: its own cache) moves the run on.
        const other: ReadStore = Object.create(store);
        await runsProjector.projectBatch!(s.do({ type: 'StartNode', workerId: WORKER, nodeId: 'a' }), other);
        await runsProjector.projectBatch!(s.do({ type: 'CompleteNode', workerId: WORKER, nodeId: 'a', output: 'A', executionTime: 1 }), other);
        // This one's cache is two versions behind: its guarded write matches nothing, it reads the run again.
        await project(s.do({ type: 'StartNode', workerId: WORKER, nodeId: 'b' }));
        expect(processView(await expectAgrees(s)).nodes.map((n) => n.status)).to.deep.equal(['completed', 'running']);
      });
    }
  });
}

suite('memory', async () => new MemoryReadStore(), 'event');
suite('memory', async () => new MemoryReadStore(), 'batch');

onMongo('runs projection on MongoDB', 'unit_runs', (connect) => {
  suite('mongodb', () => connect({ prefix: 'event_' }), 'event');
  suite('mongodb', () => connect({ prefix: 'batch_' }), 'batch');
});
