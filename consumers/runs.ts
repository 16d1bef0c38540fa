import { randomUUID } from 'node:crypto';
import { cachedRun, executeRunCommand, loadRun } from '../commands/runs.js';
import { DomainError } from '../domain/shared/decider.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Consumer } from '../ports/bus.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { RunExecutor } from '../ports/runs.js';

export interface RunWorkerPorts {
  eventStore: EventStore;
  clock: Clock;
  logger: Logger;
  runs: RunExecutor;
  /** Runs this worker executes at once (WORKER_MAX_RUNS); default 64. */
  maxRuns?: number;
}

/** Streams of the run category this consumer handles at once: claims overlap instead of queueing behind each other. */
const CLAIM_CONCURRENCY = 32;

/**
 * Executes async runs. On RunRequested it claims the run (ClaimRun with this process's worker id)
 * and executes it in the background: the handler returns at once, so the same consumer keeps
 * receiving RunStopRequested for the runs it executes (per-stream order would otherwise hold the
 * stop back until the run ended); RunTimedOut (recorded by another worker's sweep) aborts the same way.
 * A RunRequested for a run already claimed or finished does
 * nothing, which makes redelivery harmless. At `maxRuns` runs in flight the handler waits for one
 * to end before it claims: runs it cannot start yet stay unclaimed, so another worker's sweep or
 * a rebalance can still give them to a worker with room.
 */
export function runWorker(ports: RunWorkerPorts, workerName: string): Consumer {
  const { eventStore, runs } = ports;
  const workerId = `${workerName}@${runs.localWorkerId}`;
  const slots = new Slots(ports.maxRuns ?? 64);
  return {
    name: 'run-worker',
    categories: ['run'],
    concurrency: CLAIM_CONCURRENCY,
    async handle(event: RecordedEvent) {
      const processId = event.streamId.slice('run-'.length);
      if (event.type === 'RunStopRequested' || event.type === 'RunTimedOut') {
        runs.abort(processId, event.type === 'RunTimedOut' ? 'the run timed out' : undefined);
        return;
      }
      if (event.type !== 'RunRequested') return;
      // A run this process already folded past `queued` (a sync run it claimed in its request, one
      // it executes or saw end) needs no read: a run's status never goes back to queued. A run not
      // in the cache, or still queued there, is read from its stream as before.
      const known = cachedRun(eventStore, processId);
      if (known?.exists && known.status !== 'queued') return;
      let run = await loadRun(eventStore, processId);
      if (run.status !== 'queued' || run.stopRequested) return;
      const waits = slots.full();
      const release = await slots.acquire();
      if (waits) {
        // Another worker (its sweep) may have claimed it, or a stop arrived, while this one waited.
        run = await loadRun(eventStore, processId);
        if (run.status !== 'queued' || run.stopRequested) return release();
      }
      const context = {
        actorId: null,
        orgId: run.orgId,
        workspaceId: run.workspaceId,
        correlationId: event.metadata.correlationId ?? randomUUID(),
        causationId: event.id,
        requestId: null,
        now: ports.clock.now(),
      };
      try {
        await executeRunCommand(eventStore, context, processId, { type: 'ClaimRun', workerId });
      } catch (err) {
        release();
        if (err instanceof DomainError) return; // claimed by another worker, stopped or finished meanwhile
        throw err;
      }
      void runs
        .execute(processId, workerId)
        .catch((err) => ports.logger.error({ processId, err: (err as Error).message }, 'run worker failed'))
        .finally(release);
    },
  };
}

/** Runs in flight with a cap; a release hands its slot straight to the first waiter. */
class Slots {
  private used = 0;
  private readonly waiters: Array<() => void> = [];
  constructor(private readonly max: number) {}
  full(): boolean {
    return this.used >= this.max;
  }
  async acquire(): Promise<() => void> {
    if (this.used < this.max) this.used++;
    else await new Promise<void>((resolve) => this.waiters.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.used--;
    };
  }
}
