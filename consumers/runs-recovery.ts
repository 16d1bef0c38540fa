import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { handleCommand, loadState, type CommandContext } from '../commands/handle.js';
import { executeRunCommand, loadRun } from '../commands/runs.js';
import { executeWorkerCommand } from '../commands/workers.js';
import { RUN_FINISHING_EVENTS, runDecider, runStreamId, type RunState } from '../domain/runs/index.js';
import { DomainError } from '../domain/shared/decider.js';
import { heartbeatStreamId, isRunAbandoned, isWorkerDead, processOfWorkerId, workerDecider, workerStreamId, type WorkerPresence } from '../domain/workers/index.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { RunExecutor, RunRecoveryQueries, RunSettings, RunningRun } from '../ports/runs.js';
import { createRunSweep, type SweepResult } from './runs-sweep.js';

export interface RunRecoveryPorts {
  eventStore: EventStore;
  clock: Clock;
  logger: Logger;
  runs: RunExecutor;
  /** Candidates from the read side; every takeover is decided on the run's stream. */
  queries: RunRecoveryQueries;
  settings: Pick<RunSettings, 'NODE_TIMEOUT_MS' | 'WORKER_HEARTBEAT_MS' | 'RUN_TIMEOUT_MS' | 'RUN_CLAIM_TIMEOUT_MS'>;
  /** The bus consumers this process runs, announced in WorkerStarted (a dead-letter retry asks who runs its consumer). */
  consumers?: string[];
}

/**
 * Worker presence and crash recovery, one per process that runs the worker consumers. It records
 * WorkerStarted, then a WorkerHeartbeat every interval, and WorkerStopped on a graceful stop. Once
 * at start and then every interval it looks for running runs whose worker is dead (stopped, or
 * silent for 3 intervals), takes them over with ResumeRun and executes them from their last
 * completed node. Two recovering workers racing for one run are safe: ResumeRun is appended with
 * the revision the judgement was made on, so the loser gets a conflict and moves on. Before each
 * scan it runs the deadline sweep (runs-sweep.ts): runs past RUN_TIMEOUT_MS end `timed_out` rather
 * than be resumed, and queued runs nobody claimed are claimed here.
 */

/** Runs looked at per scan from the read model; the rest wait for the next scan. */
const SCAN_LIMIT = 100;

export interface RunRecovery {
  readonly workerId: string;
  /** One scan now (tests, and the scan at start); resolves when the resumed runs are claimed, not finished. */
  scan(): Promise<string[]>;
  /** One deadline sweep now (tests); resolves when the claimed runs are claimed, not finished. */
  sweep(): Promise<SweepResult>;
  stop(): Promise<void>;
}

export async function startRunRecovery(ports: RunRecoveryPorts, workerName: string, role: string, intervalMs = ports.settings.WORKER_HEARTBEAT_MS): Promise<RunRecovery> {
  const { eventStore, clock, runs, queries } = ports;
  // Presence is per process: the executor's ids for this process all end with its local worker id.
  const presenceId = runs.localWorkerId;
  const runWorkerId = `${workerName}@${runs.localWorkerId}`;
  const log = ports.logger.child({ component: 'run-recovery', workerId: presenceId });
  const context = (): CommandContext => ({ actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: clock.now() });

  await executeWorkerCommand(eventStore, context(), presenceId, { type: 'StartWorker', workerId: presenceId, host: hostname(), pid: process.pid, role, heartbeatMs: intervalMs, consumers: ports.consumers });

  // Runs claimed since this process started, followed in the log itself: the read model's list of
  // running runs (queries.runningRuns) covers what came before, but it lags by as much as the
  // projector does, and a run whose worker died must not wait for the projector to be taken over.
  const claimed = new Map<string, { workerId: string; at: string }>();
  const follow = eventStore.subscribe({ after: await eventStore.headPosition(), categories: ['run'] });
  const following = (async () => {
    try {
      for await (const e of follow) {
        const processId = e.streamId.slice('run-'.length);
        if (e.type === 'RunStarted' || e.type === 'RunResumed') claimed.set(processId, { workerId: (e.data as { workerId: string }).workerId, at: e.metadata.occurredAt });
        else if (RUN_FINISHING_EVENTS.has(e.type)) claimed.delete(processId); // no worker holds a finished run
      }
    } catch (err) {
      log.error({ err: (err as Error).message }, 'following claimed runs in the log stopped; recovery relies on the read model alone');
    }
  })();

  /**
   * A worker's presence from the log (its `worker-` stream and the newest beat of its `heartbeat-`
   * stream), not from the read model: a projector running behind must neither hide a dead worker
   * nor make a live one look silent.
   */
  async function presenceOf(holder: string): Promise<WorkerPresence | null> {
    const { state } = await loadState(eventStore, workerStreamId(holder), workerDecider);
    if (!state.exists) return null;
    const [beat] = await eventStore.readStream(heartbeatStreamId(holder), { direction: 'backwards', maxCount: 1 });
    const beatAt = (beat?.data as { at?: string } | undefined)?.at ?? null;
    const lastHeartbeatAt = [state.lastHeartbeatAt, beatAt].filter((t): t is string => t !== null).sort().pop() ?? null;
    return { lastHeartbeatAt, stoppedAt: state.stoppedAt, heartbeatMs: state.heartbeatMs };
  }

  async function holderIsDead(run: RunState, candidate: RunningRun, presences: Map<string, Promise<WorkerPresence | null>>): Promise<boolean> {
    if (!run.workerId) return false;
    const holder = processOfWorkerId(run.workerId);
    if (holder === presenceId) return false; // this process is alive by definition
    if (!presences.has(holder)) presences.set(holder, presenceOf(holder));
    const worker = await presences.get(holder)!;
    if (worker) return isWorkerDead(worker, clock.now(), intervalMs);
    return isRunAbandoned(run.updatedAt || candidate.updatedAt, clock.now(), ports.settings.NODE_TIMEOUT_MS, intervalMs);
  }

  /** Takes one run over; true when this worker now executes it. */
  async function recover(candidate: RunningRun, presences: Map<string, Promise<WorkerPresence | null>>): Promise<boolean> {
    const { processId } = candidate;
    if (runs.isExecuting(processId)) return false;
    const run = await loadRun(eventStore, processId);
    if (run.status !== 'running') claimed.delete(processId);
    if (run.status !== 'running' || !(await holderIsDead(run, candidate, presences))) return false;
    const ctx = { ...context(), orgId: run.orgId, workspaceId: run.workspaceId };
    let resumed;
    try {
      resumed = await handleCommand(eventStore, {
        streamId: runStreamId(processId),
        decider: runDecider,
        command: { type: 'ResumeRun', workerId: runWorkerId, at: ctx.now.toISOString() },
        context: ctx,
        expectedRevision: run.version,
      });
    } catch (err) {
      if (err instanceof DomainError && (err.kind === 'precondition_failed' || err.kind === 'conflict')) return false; // another worker won, or the run moved on
      // Anything else means the run cannot be taken over as it is: end it with the reason rather than leave it running.
      await failRun(processId, ctx, `the run could not be resumed: ${(err as Error).message}`);
      return false;
    }
    log.warn({ processId, previousWorkerId: run.workerId, status: resumed.state.status }, 'took over a run from a dead worker');
    if (resumed.state.status !== 'running' || resumed.state.workerId !== runWorkerId) return false; // failed (interrupted too often) or stopped
    void runs.execute(processId, runWorkerId).catch(async (err) => {
      log.error({ processId, err: (err as Error).message }, 'resumed run failed to execute');
      await failRun(processId, { ...ctx, now: clock.now() }, `the resumed run could not execute: ${(err as Error).message}`);
    });
    return true;
  }

  async function failRun(processId: string, ctx: CommandContext, reason: string) {
    try {
      await executeRunCommand(eventStore, ctx, processId, { type: 'FailRun', code: 'RESUME_FAILED', reason });
    } catch (err) {
      log.error({ processId, err: (err as Error).message }, 'could not fail a run that cannot resume');
    }
  }

  async function scan(): Promise<string[]> {
    const candidates = await queries.runningRuns(SCAN_LIMIT);
    const seen = new Set(candidates.map((c) => c.processId));
    // Runs this process saw claimed in the log, held by another process (its own are alive by definition).
    for (const [processId, { workerId, at }] of claimed) {
      if (seen.has(processId) || processOfWorkerId(workerId) === presenceId) continue;
      candidates.push({ processId, updatedAt: at });
      seen.add(processId);
    }
    const presences = new Map<string, Promise<WorkerPresence | null>>(); // one presence read per holder and scan
    const taken: string[] = [];
    for (const candidate of candidates) {
      try {
        if (await recover(candidate, presences)) taken.push(candidate.processId);
      } catch (err) {
        log.error({ processId: candidate.processId, err: (err as Error).message }, 'recovering a run failed; retrying at the next scan');
      }
    }
    return taken;
  }

  const deadlines = createRunSweep(ports, runWorkerId);
  const sweep = () => deadlines.sweep();

  let stopped = false;
  let busy: Promise<unknown> = Promise.resolve();
  let beating: Promise<unknown> = Promise.resolve();
  async function beat() {
    try {
      await executeWorkerCommand(eventStore, context(), presenceId, { type: 'RecordHeartbeat' });
    } catch (err) {
      log.error({ err: (err as Error).message }, 'recording the heartbeat failed');
    }
  }
  async function tick() {
    try {
      await sweep();
      await scan();
    } catch (err) {
      log.error({ err: (err as Error).message }, 'deadline sweep or recovery scan failed');
    }
  }
  let scanning = false;
  const timer = setInterval(() => {
    if (stopped) return;
    // The beat never waits behind a long scan: a busy worker must not look dead to the others.
    beating = beating.then(beat);
    if (scanning) return; // a scan still running: skip this one rather than queue scans up
    scanning = true;
    busy = busy.then(tick).finally(() => (scanning = false));
  }, intervalMs);
  timer.unref();
  busy = busy.then(() =>
    sweep()
      .then(scan)
      .catch((err) => log.error({ err: (err as Error).message }, 'deadline sweep or recovery scan at start failed')),
  );

  return {
    workerId: presenceId,
    scan,
    sweep,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await busy;
      await beating;
      await follow.close();
      await following;
      await executeWorkerCommand(eventStore, context(), presenceId, { type: 'StopWorker' }).catch((err) =>
        log.warn({ err: (err as Error).message }, 'could not record the worker stop'),
      );
    },
  };
}
