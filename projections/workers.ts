import { isWorkerDead, type WorkerEvent } from '../domain/workers/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

/** Read model of worker presence (`workers`): one document per worker process incarnation. */
export interface WorkerDoc extends Doc {
  host: string;
  pid: number;
  role: string;
  heartbeatMs: number;
  startedAt: string;
  lastHeartbeatAt: string;
  stoppedAt: string | null;
  /** The bus consumers it announced; null when it did not say (an older worker): unknown, not none. */
  consumers?: string[] | null;
  version: number;
}

const COLLECTION = 'workers';

export const workersProjector: Projector = {
  name: 'workers',
  // Beats come from `heartbeat-<id>` (older logs also have them in `worker-<id>`).
  categories: ['worker', 'heartbeat'],
  ...ownedCollections({ [COLLECTION]: [{ keys: { lastHeartbeatAt: -1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & WorkerEvent;
    const workers = store.collection<WorkerDoc>(COLLECTION);
    const id = recorded.streamId.slice(recorded.streamId.indexOf('-') + 1);
    // Guarded by the stream revision: a redelivered event changes nothing.
    const newer = { _id: id, version: { $lt: recorded.revision } };
    switch (event.type) {
      case 'WorkerStarted': {
        const d = event.data;
        const doc: WorkerDoc = { _id: id, host: d.host, pid: d.pid, role: d.role, heartbeatMs: d.heartbeatMs, startedAt: d.at, lastHeartbeatAt: d.at, stoppedAt: null, consumers: d.consumers ?? null, version: recorded.revision };
        if (await workers.findOne({ _id: id })) return;
        await workers.replaceOne({ _id: id }, doc, { upsert: true });
        return;
      }
      case 'WorkerHeartbeat':
        if (recorded.streamId.startsWith('worker-')) {
          // A beat written before beats had their own stream.
          await workers.updateOne(newer, { $set: { lastHeartbeatAt: event.data.at, version: recorded.revision } });
        } else {
          // Ordered by the beat's own time: the heartbeat stream's revisions are not the presence stream's.
          await workers.updateOne({ _id: id, lastHeartbeatAt: { $lt: event.data.at } }, { $set: { lastHeartbeatAt: event.data.at } });
        }
        return;
      case 'WorkerStopped':
        await workers.updateOne(newer, { $set: { stoppedAt: event.data.at, version: recorded.revision } });
        return;
    }
  },
};

/** Every known worker, most recently heard from first (GET /system/workers will page it). */
export function listWorkers(store: ReadStore, options: { limit: number; cursor?: string | null } = { limit: 100 }) {
  return store.collection<WorkerDoc>(COLLECTION).page({}, { sort: { lastHeartbeatAt: -1 }, limit: options.limit, cursor: options.cursor ?? null });
}

export function getWorker(store: ReadStore, workerId: string) {
  return store.collection<WorkerDoc>(COLLECTION).findOne({ _id: workerId });
}

/** Workers whose last beat is older than this are not looked at (dead by any interval in use). */
const RECENT_BEAT_MS = 10 * 60_000;
const RECENT_WORKERS = 200;

/**
 * Whether a live worker runs `consumer` (POST /admin/dead-letters/{id}/retry asks before queueing a
 * retry nobody would take). `unknown`: a live worker announced no consumer list (it predates the
 * list), so it may run it. Served by the `lastHeartbeatAt` index: only recently heard workers.
 */
export async function consumerRunner(store: ReadStore, consumer: string, now: Date, fallbackHeartbeatMs: number): Promise<'running' | 'unknown' | 'none'> {
  const since = new Date(now.getTime() - RECENT_BEAT_MS).toISOString();
  const recent = await store.collection<WorkerDoc>(COLLECTION).find({ lastHeartbeatAt: { $gte: since } }, { sort: { lastHeartbeatAt: -1 }, limit: RECENT_WORKERS });
  const live = recent.filter((w) => !isWorkerDead({ lastHeartbeatAt: w.lastHeartbeatAt, stoppedAt: w.stoppedAt, heartbeatMs: w.heartbeatMs }, now, fallbackHeartbeatMs));
  if (live.some((w) => w.consumers?.includes(consumer))) return 'running';
  return live.some((w) => !w.consumers) ? 'unknown' : 'none';
}
