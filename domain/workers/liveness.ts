/**
 * The "is this worker dead" rule, pure so it can be tested with a clock in hand. A worker is dead
 * when it said it stopped, or when it has been silent for MISSED_HEARTBEATS of its own intervals.
 * A run held by a worker nobody knows (an API process that ran a synchronous run, or a worker from
 * before presence existed) is judged by the run's own progress instead: a live executor records a
 * step at least every node timeout, so silence well past that means nobody is executing it.
 */
export const MISSED_HEARTBEATS = 3;

export interface WorkerPresence {
  lastHeartbeatAt: string | null;
  stoppedAt: string | null;
  heartbeatMs: number;
}

export function isWorkerDead(worker: WorkerPresence, now: Date, fallbackHeartbeatMs: number): boolean {
  if (worker.stoppedAt) return true;
  const interval = worker.heartbeatMs > 0 ? worker.heartbeatMs : fallbackHeartbeatMs;
  const last = worker.lastHeartbeatAt ? Date.parse(worker.lastHeartbeatAt) : NaN;
  if (Number.isNaN(last)) return true;
  return now.getTime() - last > MISSED_HEARTBEATS * interval;
}

/** For a run whose worker left no presence: silent for longer than a node may run, plus the detection margin. */
export function isRunAbandoned(runUpdatedAt: string, now: Date, nodeTimeoutMs: number, heartbeatMs: number): boolean {
  const last = Date.parse(runUpdatedAt);
  if (Number.isNaN(last)) return true;
  return now.getTime() - last > nodeTimeoutMs + MISSED_HEARTBEATS * heartbeatMs;
}

/**
 * The process part of a run's worker id: run workers hold runs as `<consumer>@<process id>`,
 * synchronous runs as the bare process id; presence is per process.
 */
export function processOfWorkerId(runWorkerId: string): string {
  const at = runWorkerId.lastIndexOf('@');
  return at === -1 ? runWorkerId : runWorkerId.slice(at + 1);
}
