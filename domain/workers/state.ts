import type { WorkerEvent } from './events.js';

export interface WorkerState {
  exists: boolean;
  workerId: string;
  host: string;
  pid: number;
  role: string;
  heartbeatMs: number;
  startedAt: string | null;
  lastHeartbeatAt: string | null;
  stoppedAt: string | null;
}

export const initialWorkerState: WorkerState = {
  exists: false,
  workerId: '',
  host: '',
  pid: 0,
  role: '',
  heartbeatMs: 0,
  startedAt: null,
  lastHeartbeatAt: null,
  stoppedAt: null,
};

export function evolveWorker(state: WorkerState, event: WorkerEvent): WorkerState {
  switch (event.type) {
    case 'WorkerStarted': {
      const { workerId, host, pid, role, heartbeatMs, at } = event.data;
      return { exists: true, workerId, host, pid, role, heartbeatMs, startedAt: at, lastHeartbeatAt: at, stoppedAt: null };
    }
    case 'WorkerHeartbeat':
      return { ...state, lastHeartbeatAt: event.data.at };
    case 'WorkerStopped':
      return { ...state, stoppedAt: event.data.at };
    default:
      return state;
  }
}
