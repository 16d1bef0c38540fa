/** Worker presence (stream `worker-<workerId>`): who executes runs, and whether it is still alive. */
export * from './events.js';
export * from './decide.js';
export * from './liveness.js';
