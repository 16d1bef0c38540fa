import { DomainError } from '../shared/decider.js';
import type { WorkerEvent } from './events.js';
import type { WorkerState } from './state.js';

export type WorkerCommand =
  | { type: 'StartWorker'; workerId: string; host: string; pid: number; role: string; heartbeatMs: number; consumers?: string[]; at: string }
  | { type: 'RecordHeartbeat'; at: string }
  | { type: 'StopWorker'; at: string };

export const workerStreamId = (workerId: string) => `worker-${workerId}`;
/**
 * Beats live in their own stream, which the log truncates (domain/retention.ts): liveness needs the
 * newest beat only, while `worker-<id>` keeps the incarnation's start and stop for good.
 */
export const heartbeatStreamId = (workerId: string) => `heartbeat-${workerId}`;

/** A worker id names one process incarnation: it starts once, beats until it stops, and never comes back. */
export function decideWorker(command: WorkerCommand, state: WorkerState): WorkerEvent[] {
  switch (command.type) {
    case 'StartWorker': {
      const { workerId, host, pid, role, heartbeatMs, consumers, at } = command;
      // The same announcement again (a retry, or a second component of the same process) is no event.
      const same = state.host === host && state.pid === pid && state.role === role && state.heartbeatMs === heartbeatMs;
      if (state.exists && same && !state.stoppedAt) return [];
      if (state.exists) throw new DomainError('WORKER_ALREADY_STARTED', `worker ${command.workerId} already started`, 'conflict');
      return [{ type: 'WorkerStarted', data: { workerId, host, pid, role, heartbeatMs, ...(consumers ? { consumers: [...new Set(consumers)].sort() } : {}), at } }];
    }
    case 'RecordHeartbeat':
      if (!state.exists) throw new DomainError('WORKER_NOT_FOUND', 'worker not found', 'not_found');
      if (state.stoppedAt) throw new DomainError('WORKER_STOPPED', `worker ${state.workerId} has stopped`, 'conflict');
      return [{ type: 'WorkerHeartbeat', data: { at: command.at } }];
    case 'StopWorker':
      if (!state.exists) throw new DomainError('WORKER_NOT_FOUND', 'worker not found', 'not_found');
      if (state.stoppedAt) return [];
      return [{ type: 'WorkerStopped', data: { at: command.at } }];
  }
}
