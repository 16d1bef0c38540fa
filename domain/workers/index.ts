import { decider, type Decider } from '../shared/decider.js';
import { decideWorker, type WorkerCommand } from './decide.js';
import { workerEventSchemas, type WorkerEvent } from './events.js';
import { evolveWorker, initialWorkerState, type WorkerState } from './state.js';

/** Worker presence (stream `worker-<workerId>`): who executes runs, and whether it is still alive. */
export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './liveness.js';

export const workerDecider: Decider<WorkerCommand, WorkerState, WorkerEvent> = decider(initialWorkerState, evolveWorker, decideWorker, workerEventSchemas);
