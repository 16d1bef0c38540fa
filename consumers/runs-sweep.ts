import { randomUUID } from 'node:crypto';
import { handleCommand, type CommandContext } from '../commands/handle.js';
import { loadRun } from '../commands/runs.js';
import { runDecider, runStreamId, type RunCommand, type RunState } from '../domain/runs/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { RunExecutor, RunRecoveryQueries, RunSettings } from '../ports/runs.js';

export interface RunSweepPorts {
  eventStore: EventStore;
  clock: Clock;
  logger: Logger;
  runs: RunExecutor;
  /** Candidates from the read side; every decision is made on the run's stream. */
  queries: Pick<RunRecoveryQueries, 'overdueRuns'>;
  settings: Pick<RunSettings, 'RUN_TIMEOUT_MS' | 'RUN_CLAIM_TIMEOUT_MS'>;
}

export interface SweepResult {
  /** Queued runs nobody claimed, now claimed and executed by this worker. */
  claimed: string[];
  /** Runs past RUN_TIMEOUT_MS, queued or running, now `timed_out`. */
  timedOut: string[];
}

/** Runs looked at per kind and sweep; the rest wait for the next sweep. */
const SWEEP_LIMIT = 100;

/**
 * Runs never wait forever. The workers sweep (with the recovery scan, at start and on every
 * heartbeat) for queued runs nobody claimed within RUN_CLAIM_TIMEOUT_MS — the bus lost or held
 * back their RunRequested — and for runs past RUN_TIMEOUT_MS. The read model only names candidates:
 * each one is judged by the run decider on the run's folded state with this worker's time, and the
 * outcome appended at the revision judged on, so several sweeping workers (or a worker and the
 * executor checking the same deadline) yield one claim or one RunTimedOut, never two. Nothing
 * lives in memory between sweeps: a restarted worker finds the same runs in the same state.
 */
export function createRunSweep(ports: RunSweepPorts, runWorkerId: string) {
  const { eventStore, clock, runs, settings } = ports;
  const log = ports.logger.child({ component: 'run-sweep' });
  const context = (run: RunState): CommandContext => ({
    actorId: null,
    orgId: run.orgId,
    workspaceId: run.workspaceId,
    correlationId: randomUUID(),
    causationId: null,
    requestId: null,
    now: clock.now(),
  });

  /** The decider's verdict appended at `run.version`; null when another writer moved the run first. */
  async function decide(run: RunState, command: (at: string) => RunCommand) {
    const ctx = context(run);
    try {
      return await handleCommand(eventStore, { streamId: runStreamId(run.processId), decider: runDecider, command: command(ctx.now.toISOString()), context: ctx, expectedRevision: run.version });
    } catch (err) {
      if (err instanceof DomainError && (err.kind === 'precondition_failed' || err.kind === 'conflict')) return null;
      throw err;
    }
  }

  async function sweepQueued(processId: string, result: SweepResult) {
    const run = await loadRun(eventStore, processId);
    if (run.status !== 'queued') return;
    const outcome = await decide(run, (at) => ({
      type: 'SweepUnclaimedRun',
      workerId: runWorkerId,
      claimTimeoutMs: settings.RUN_CLAIM_TIMEOUT_MS,
      runTimeoutMs: settings.RUN_TIMEOUT_MS,
      at,
    }));
    const after = outcome?.state;
    if (after?.status === 'timed_out') {
      result.timedOut.push(processId);
      log.warn({ processId }, 'timed out a run that stayed queued');
    } else if (after?.status === 'running' && after.workerId === runWorkerId && outcome!.events.length > 0) {
      result.claimed.push(processId);
      log.warn({ processId, requestedAt: run.requestedAt }, 'claimed a run nobody claimed');
      void runs.execute(processId, runWorkerId).catch((err) => log.error({ processId, err: (err as Error).message }, 'a swept run failed to execute'));
    }
  }

  async function sweepRunning(processId: string, result: SweepResult) {
    const run = await loadRun(eventStore, processId);
    if (run.status !== 'running') return;
    const outcome = await decide(run, (at) => ({ type: 'TimeOutRun', timeoutMs: settings.RUN_TIMEOUT_MS, at }));
    if (outcome?.state.status !== 'timed_out' || outcome.events.length === 0) return;
    result.timedOut.push(processId);
    // The executor sees the end on its next step and aborts; a run executed here is aborted now.
    runs.abort(processId, 'the run timed out');
    log.warn({ processId, workerId: run.workerId }, 'timed out a run past RUN_TIMEOUT_MS');
  }

  return {
    async sweep(): Promise<SweepResult> {
      const result: SweepResult = { claimed: [], timedOut: [] };
      const now = clock.now().getTime();
      const before = (ms: number) => new Date(now - ms).toISOString();
      const passes: Array<[candidates: () => Promise<Array<{ processId: string }>>, (id: string, r: SweepResult) => Promise<void>]> = [
        [() => ports.queries.overdueRuns('running', before(settings.RUN_TIMEOUT_MS), SWEEP_LIMIT), sweepRunning],
        [() => ports.queries.overdueRuns('queued', before(Math.min(settings.RUN_CLAIM_TIMEOUT_MS, settings.RUN_TIMEOUT_MS)), SWEEP_LIMIT), sweepQueued],
      ];
      for (const [candidates, sweepOne] of passes) {
        for (const { processId } of await candidates()) {
          try {
            await sweepOne(processId, result);
          } catch (err) {
            log.error({ processId, err: (err as Error).message }, 'sweeping a run failed; retrying at the next sweep');
          }
        }
      }
      return result;
    },
  };
}
