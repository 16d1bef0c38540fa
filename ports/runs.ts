import type { RunState } from '../domain/runs/index.js';
import type { WorkerPresence } from '../domain/workers/liveness.js';
import type { Config } from '../infra/config/index.js';
import type { PendingStream } from './event-store.js';

/** The configuration the run engine reads (a slice of it). */
export type RunSettings = Pick<
  Config,
  'NODE_TIMEOUT_MS' | 'RUN_CONCURRENCY' | 'ALLOW_PRIVATE_NETWORK' | 'READ_YOUR_WRITES_TIMEOUT_MS' | 'WORKER_HEARTBEAT_MS' | 'RUN_TIMEOUT_MS' | 'RUN_CLAIM_TIMEOUT_MS'
>;

/**
 * The run engine as the rest of the service sees it. The executor lives in consumers/ (it is the
 * run worker's job); routes that run a flow synchronously reach it through this port, which the
 * container wires, so the API never imports a consumer.
 */
export interface RunExecutor {
  /** This process's worker id: a synchronous run is claimed by it in the decision that requests it. */
  readonly localWorkerId: string;
  /**
   * Executes a claimed run to its end (or until another worker holds it); resolves with its state.
   * `pending`: a run this process requested and claimed without appending yet (a synchronous run):
   * its events stay held while its nodes run only in this process, and are appended before a node
   * reaches outside or anything is written elsewhere about it, and at the latest when it ends.
   */
  execute(processId: string, workerId: string, pending?: PendingStream<RunState>): Promise<RunState>;
  /** Aborts the in-flight calls of a run this process executes (a stop); nothing when it executes none. */
  abort(processId: string, reason?: string): void;
  isExecuting(processId: string): boolean;
}

/** A running run as the recovery scan finds it. */
export interface RunningRun {
  processId: string;
  updatedAt: string;
}

/** A queued or running run as the deadline sweep finds it. */
export interface OverdueRun {
  processId: string;
  requestedAt: string;
}

/**
 * What crash recovery reads from the read side, implemented by the query functions of
 * projections/runs.ts and projections/workers.ts and wired in the container: candidates only,
 * every takeover is still decided on the run's own stream.
 */
export interface RunRecoveryQueries {
  /** Running runs, least recently updated first. */
  runningRuns(limit: number): Promise<RunningRun[]>;
  /** Runs in `status` requested at or before `requestedBefore` (ISO time), oldest first: the deadline sweep's candidates. */
  overdueRuns(status: 'queued' | 'running', requestedBefore: string, limit: number): Promise<OverdueRun[]>;
  /** A worker process's presence, or null when it never recorded one. */
  workerPresence(workerId: string): Promise<WorkerPresence | null>;
}

/** A run whose history retention may prune (projections/runs-retention.ts). */
export interface RetainedRun {
  _id: string;
  flowId: string;
  orgId: string | null;
  finishedAt: string | null;
}

/** Run-history retention's read side: candidates oldest first, and a flow's runs kept whole. */
export interface RunRetentionQueries {
  /** Finished runs not pruned, finished before `before`: of one organization, or of all but `exceptOrgs`. */
  finishedBefore(before: string, scope: { orgId: string } | { exceptOrgs: string[] }, limit: number): Promise<RetainedRun[]>;
  /** Runs that finished at or after `since`, oldest first (the flows a keep-last check looks at). */
  finishedSince(since: string, limit: number): Promise<RetainedRun[]>;
  /** How many finished runs of the flow still keep their whole history. */
  keptOfFlow(flowId: string): Promise<number>;
  /** A flow's finished runs beyond its newest `keep`. */
  beyondNewest(flowId: string, keep: number, limit: number): Promise<RetainedRun[]>;
}
