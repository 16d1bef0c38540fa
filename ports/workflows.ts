/** A pending timer as the timers consumer's scan finds it. */
export interface DueTimer {
  workflowId: string;
  timerId: string;
  /** ISO time. */
  fireAt: string;
}

/**
 * What the workflow consumers read from the read side (implemented by projections/workflows.ts,
 * wired in the container): candidates only, every firing or takeover is decided on the workflow's stream.
 */
export interface WorkflowQueries {
  /** Pending timers due at or before `before` (ISO time), earliest first. */
  dueTimers(before: string, limit: number): Promise<DueTimer[]>;
  /** Running workflows with a node in flight on some worker, least recently updated first. */
  runningWorkflows(limit: number): Promise<Array<{ workflowId: string; workerId: string | null; updatedAt: string }>>;
}

/**
 * The timers of workflows as this process holds them (consumers/workflows-timers.ts, wired in the
 * container): only timers due within the horizon are held; the rest are found by the periodic scan.
 */
export interface WorkflowTimers {
  /** A timer was scheduled (or found due): held when due within the horizon, else left to the scan. */
  schedule(workflowId: string, timerId: string, fireAt: string): void;
  /** Starts the scan (at once, then periodically); called by the worker role's consumers. */
  startWorker(): void;
  /** One scan now (tests): resolves when the due timers found are armed. */
  scan(): Promise<number>;
  /** Timers held in memory now. */
  readonly held: number;
  close(): Promise<void>;
}
