import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { allRetentionPolicies } from '../../domain/retention.js';
import { executeWorkerCommand } from '../../commands/workers.js';
import type { CommandContext } from '../../commands/handle.js';
import type { DomainError } from '../../domain/shared/decider.js';
import { expect } from 'chai';
import { isRunAbandoned, isWorkerDead, processOfWorkerId, workerDecider, workerEventSchemas, type WorkerCommand, type WorkerEvent } from '../../domain/workers/index.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { getWorker, listWorkers, workersProjector } from '../../projections/workers.js';
import { deciderSpec } from '../support/decider-spec.js';
import { projectionSpec } from '../support/projection-spec.js';

const spec = deciderSpec(workerDecider);
const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:00:05.000Z';
const start: WorkerCommand = { type: 'StartWorker', workerId: 'h:1:abc', host: 'h', pid: 1, role: 'worker', heartbeatMs: 5_000, at };
const started: WorkerEvent = { type: 'WorkerStarted', data: { workerId: 'h:1:abc', host: 'h', pid: 1, role: 'worker', heartbeatMs: 5_000, at } };
const stopped: WorkerEvent = { type: 'WorkerStopped', data: { at: later } };


describe('worker decider', () => {
  it('starts a worker once; its events match their schemas', () => {
    const events = spec.given([]).when(start).events();
    expect(events).to.deep.equal([started]);
    for (const e of events) expect(workerEventSchemas[e.type].safeParse(e.data).success).to.equal(true);
    expect(spec.given([started]).when(start).events(), 'the same announcement again').to.deep.equal([]);
    spec.given([started]).when({ ...start, pid: 2 }).thenThrows('WORKER_ALREADY_STARTED');
    spec.given([started, stopped]).when(start).thenThrows('WORKER_ALREADY_STARTED');
  });

  it('records heartbeats of a started, running worker only', () => {
    spec.given([started]).when({ type: 'RecordHeartbeat', at: later }).then([{ type: 'WorkerHeartbeat', data: { at: later } }]);
    spec.given([]).when({ type: 'RecordHeartbeat', at }).thenThrows('WORKER_NOT_FOUND');
    spec.given([started, stopped]).when({ type: 'RecordHeartbeat', at }).thenThrows('WORKER_STOPPED');
  });

  it('stops once (stopping again is no event)', () => {
    spec.given([started]).when({ type: 'StopWorker', at: later }).then([stopped]);
    spec.given([started, stopped]).when({ type: 'StopWorker', at: later }).then([]);
    spec.given([]).when({ type: 'StopWorker', at }).thenThrows('WORKER_NOT_FOUND');
  });

  it('folds presence: last heartbeat and stop', () => {
    const s = spec.stateOf([started, { type: 'WorkerHeartbeat', data: { at: later } }]);
    expect(s).to.include({ exists: true, workerId: 'h:1:abc', lastHeartbeatAt: later, stoppedAt: null, heartbeatMs: 5_000 });
    expect(spec.stateOf([started, stopped]).stoppedAt).to.equal(later);
  });
});

describe('is this worker dead', () => {
  const beat = (lastHeartbeatAt: string | null, stoppedAt: string | null = null, heartbeatMs = 1_000) => ({ lastHeartbeatAt, stoppedAt, heartbeatMs });
  const now = new Date('2026-01-01T00:00:10.000Z');

  it('is alive while it beat within 3 of its intervals', () => {
    expect(isWorkerDead(beat('2026-01-01T00:00:09.000Z'), now, 5_000)).to.equal(false);
    expect(isWorkerDead(beat('2026-01-01T00:00:07.000Z'), now, 5_000)).to.equal(false); // exactly 3 intervals
  });

  it('is dead when silent for more than 3 intervals, or stopped, or never beat', () => {
    expect(isWorkerDead(beat('2026-01-01T00:00:06.999Z'), now, 5_000)).to.equal(true);
    expect(isWorkerDead(beat('2026-01-01T00:00:09.900Z', '2026-01-01T00:00:09.950Z'), now, 5_000)).to.equal(true);
    expect(isWorkerDead(beat(null), now, 5_000)).to.equal(true);
  });

  it("judges by the worker's own interval, the caller's only when it has none", () => {
    expect(isWorkerDead(beat('2026-01-01T00:00:00.000Z', null, 5_000), now, 100)).to.equal(false);
    expect(isWorkerDead(beat('2026-01-01T00:00:09.000Z', null, 0), now, 100)).to.equal(true);
  });

  it('a run of an unknown worker is abandoned only past the node timeout plus the margin', () => {
    expect(isRunAbandoned('2026-01-01T00:00:00.000Z', now, 5_000, 1_000)).to.equal(true);
    expect(isRunAbandoned('2026-01-01T00:00:03.000Z', now, 5_000, 1_000)).to.equal(false);
  });

  it('finds the process behind a run worker id', () => {
    expect(processOfWorkerId('worker:12@host:12:abcd')).to.equal('host:12:abcd');
    expect(processOfWorkerId('host:12:abcd')).to.equal('host:12:abcd');
  });
});

describe('workers projection', () => {
  const recorded = (event: WorkerEvent, revision: number) =>
    ({ id: `e${revision}`, streamId: 'worker-h:1:abc', revision, position: revision + 1, type: event.type, data: event.data, metadata: {} }) as unknown as RecordedEvent;

  it('keeps one document per worker; a redelivered event changes nothing', async () => {
    const store = new MemoryReadStore();
    await workersProjector.setup(store);
    await workersProjector.project(recorded(started, 0), store);
    await workersProjector.project(recorded({ type: 'WorkerHeartbeat', data: { at: later } }, 1), store);
    await workersProjector.project(recorded(started, 0), store);
    await workersProjector.project(recorded({ type: 'WorkerHeartbeat', data: { at } }, 1), store);
    expect(await getWorker(store, 'h:1:abc')).to.deep.include({ host: 'h', pid: 1, role: 'worker', startedAt: at, lastHeartbeatAt: later, stoppedAt: null, version: 1 });
    await workersProjector.project(recorded({ type: 'WorkerStopped', data: { at: later } }, 2), store);
    const page = await listWorkers(store);
    expect(page.items.map((w) => [w._id, w.stoppedAt])).to.deep.equal([['h:1:abc', later]]);
  });

  it('projects the same document on every read store, also after a redelivery of the whole stream', async () => {
    const stream = 'worker-h:1:abc';
    await projectionSpec([workersProjector])
      .given([
        { streamId: stream, event: started },
        { streamId: stream, event: { type: 'WorkerHeartbeat', data: { at: later } } },
        { streamId: stream, event: { type: 'WorkerStopped', data: { at: later } } },
      ])
      .then(async (store) => {
        expect(await getWorker(store, 'h:1:abc')).to.deep.include({ host: 'h', pid: 1, role: 'worker', startedAt: at, lastHeartbeatAt: later, stoppedAt: later, version: 2 });
        expect((await listWorkers(store)).items.map((w) => w._id)).to.deep.equal(['h:1:abc']);
      });
  });

  it('takes beats from the heartbeat stream by their time, whatever order they arrive in', async () => {
    const latest = '2026-01-01T00:00:20.000Z';
    await projectionSpec([workersProjector])
      .given([
        { streamId: 'worker-h:1:abc', event: started },
        { streamId: 'heartbeat-h:1:abc', event: { type: 'WorkerHeartbeat', data: { at: latest } } },
        { streamId: 'heartbeat-h:1:abc', event: { type: 'WorkerHeartbeat', data: { at: later } } },
      ])
      .then(async (store) => {
        expect(await getWorker(store, 'h:1:abc')).to.deep.include({ startedAt: at, lastHeartbeatAt: latest, stoppedAt: null, version: 0 });
      });
  });
});

describe('worker heartbeats in their own, truncated stream', () => {
  it('records beats in heartbeat-<id>, refuses them for a stopped worker, and the store keeps only the newest', async () => {
    const store = new SqliteEventStore(':memory:', { retention: allRetentionPolicies });
    const context = (): CommandContext => ({ actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, now: new Date() });
    try {
      await executeWorkerCommand(store, context(), 'h:1:abc', { type: 'StartWorker', workerId: 'h:1:abc', host: 'h', pid: 1, role: 'worker', heartbeatMs: 5000 });
      const beats = allRetentionPolicies.heartbeat.maxCount + 20;
      for (let i = 0; i < beats; i++) await executeWorkerCommand(store, context(), 'h:1:abc', { type: 'RecordHeartbeat' });
      expect((await store.readStream('worker-h:1:abc')).map((e) => e.type)).to.deep.equal(['WorkerStarted']);
      const kept = await store.readStream('heartbeat-h:1:abc');
      expect(kept).to.have.length(allRetentionPolicies.heartbeat.maxCount);
      expect(kept.at(-1)!.revision).to.equal(beats - 1);
      await executeWorkerCommand(store, context(), 'h:1:abc', { type: 'StopWorker' });
      const refused = await executeWorkerCommand(store, context(), 'h:1:abc', { type: 'RecordHeartbeat' }).then(() => null, (e: DomainError) => e.code);
      expect(refused).to.equal('WORKER_STOPPED');
    } finally {
      await store.close();
    }
  });
});

