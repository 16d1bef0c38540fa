import type { ConditionalResult, NodeError, NodeUsage, OverrideConfig, PruneReason, RunMode, RunReplay } from './events.js';
import type { FlowOrigin } from './state.js';

/**
 * Commands of the run aggregate (stream `run-<processId>`). Ids and time come in the command.
 *
 * `workerId` is the fencing token of a claimed run: the node commands carry it, and a worker that
 * lost the run (another one resumed it after taking it for dead) is refused with
 * RUN_CLAIMED_BY_OTHER_WORKER instead of writing over the new owner's work. Commands a supervisor
 * may issue (FailRun, CompleteRun, ConfirmStop) take it optionally.
 */
interface Base {
  at: string;
}

/** The flow a run or a workflow is made from: its nodes and edges at flowVersion, as stored (FlowState's); the decider snapshots them. */
export interface FlowSnapshot extends FlowOrigin {
  nodes: ReadonlyArray<{ id: string; data: unknown }>;
  edges: ReadonlyArray<{ id: string; source: string; target: string }>;
}

export interface RequestRunCommand extends Base, FlowSnapshot {
  type: 'RequestRun';
  processId: string;
  mode: RunMode;
  /** Required with mode `node`. */
  nodeId?: string | null;
  inputs: Record<string, unknown>;
  async: boolean;
  requestedBy: string | null;
  source?: string;
  saveToHistory?: boolean;
  overrideConfig?: OverrideConfig | null;
  idempotencyKey?: string | null;
  /**
   * A synchronous run executed by the process that asks for it: claimed in the same decision
   * (RunRequested + RunStarted in one append).
   */
  claimBy?: string;
  replay?: RunReplay;
}

export type RunCommand =
  | RequestRunCommand
  | (Base & { type: 'ClaimRun'; workerId: string })
  | (Base & { type: 'StartNode'; workerId: string; nodeId: string })
  | (Base & {
      type: 'CompleteNode';
      workerId: string;
      nodeId: string;
      /** When given, must be the node's current attempt (a late answer of an earlier attempt is refused). */
      attempt?: number;
      output: unknown;
      metadata?: Record<string, unknown>;
      conditionalResults?: ConditionalResult[];
      usage?: NodeUsage;
      /** Milliseconds. */
      executionTime: number;
    })
  | (Base & { type: 'FailNode'; workerId: string; nodeId: string; attempt?: number; error: NodeError; executionTime: number })
  /** Records skips the scheduler computes; the decider records them by itself after each step, so this is a repair path. */
  | (Base & { type: 'SkipNodes'; workerId: string; skips: Array<{ nodeId: string; reason: string }> })
  | (Base & { type: 'CompleteRun'; workerId?: string })
  | (Base & { type: 'FailRun'; workerId?: string; reason: string; code?: string; nodeId?: string | null })
  | (Base & { type: 'RequestStop'; by: string | null })
  | (Base & { type: 'ConfirmStop'; workerId?: string })
  /**
   * The caller judged the run's worker dead: `workerId` takes over. Nodes that were running start
   * again (attempt + 1), up to `maxAttempts` (default MAX_NODE_ATTEMPTS); past it the run fails.
   */
  | (Base & { type: 'ResumeRun'; workerId: string; maxAttempts?: number })
  /**
   * A deadline check (the executor between steps, the workers' sweep): records RunTimedOut when the
   * run is still active `timeoutMs` (RUN_TIMEOUT_MS) after it was requested; else no event.
   */
  | (Base & { type: 'TimeOutRun'; timeoutMs: number })
  /**
   * The workers' sweep over queued runs: one nobody claimed within `claimTimeoutMs` is claimed by
   * `workerId`, or timed out when it is already past `runTimeoutMs`; else no event.
   */
  | (Base & { type: 'SweepUnclaimedRun'; workerId: string; claimTimeoutMs: number; runTimeoutMs: number })
  /**
   * Retention (consumers/runs-retention.ts): a finished run's history is cut down to its summary.
   * A run still active is refused; one already pruned records nothing.
   */
  | (Base & { type: 'PruneRunHistory'; reason: PruneReason; keepDays: number | null; keepLast: number | null });

export type RunCommandOf<T extends RunCommand['type']> = Extract<RunCommand, { type: T }>;
