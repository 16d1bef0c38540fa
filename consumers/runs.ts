import { randomUUID } from 'node:crypto';
import { executeRunCommand, loadRun } from '../commands/runs.js';
import { DomainError } from '../domain/shared/decider.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Consumer } from '../infra/ports/bus.js';
import type { Clock } from '../infra/ports/clock.js';
import type { EventStore } from '../infra/ports/event-store.js';
import type { Logger } from '../infra/ports/logger.js';
import type { RunExecutor } from '../infra/ports/runs.js';

export interface RunWorkerPorts {
  eventStore: EventStore;
  clock: Clock;
  logger: Logger;
  runs: RunExecutor;
}

/**
 * Executes async runs. On RunRequested it claims the run (ClaimRun with this process's worker id)
 * and executes it in the background: the handler returns at once, so the same consumer keeps
 * receiving RunStopRequested for the runs it executes (per-stream order would otherwise hold the
 * stop back until the run ended); RunTimedOut (recorded by another worker's sweep) aborts the same way.
 * A RunRequested for a run already claimed or finished does
 * nothing, which makes redelivery harmless.
 */
export function runWorker(ports: RunWorkerPorts, workerName: string): Consumer {
  const { eventStore, runs } = ports;
  const workerId = `${workerName}@${runs.localWorkerId}`;
  return {
    name: 'run-worker',
    categories: ['run'],
    async handle(event: RecordedEvent) {
      const processId = event.streamId.slice('run-'.length);
      if (event.type === 'RunStopRequested' || event.type === 'RunTimedOut') {
        runs.abort(processId, event.type === 'RunTimedOut' ? 'the run timed out' : undefined);
        return;
      }
      if (event.type !== 'RunRequested') return;
      const run = await loadRun(eventStore, processId);
      if (run.status !== 'queued' || run.stopRequested) return;
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
        if (err instanceof DomainError) return; // claimed by another worker, stopped or finished meanwhile
        throw err;
      }
      void runs.execute(processId, workerId).catch((err) => ports.logger.error({ processId, err: (err as Error).message }, 'run worker failed'));
    },
  };
}
