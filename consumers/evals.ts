import { randomUUID } from 'node:crypto';
import { launchEvaluation, type EvalRunPorts } from '../commands/evals-run.js';
import { loadState } from '../commands/handle.js';
import { evaluationDecider, evaluationStreamId } from '../domain/evals/index.js';
import { heartbeatStreamId, isWorkerDead, workerDecider, workerStreamId } from '../domain/workers/index.js';
import type { LocalWork } from '../ports/local-work.js';

/**
 * Evaluations survive a restart: an evaluation's runner lives in the service that asked for it, so
 * when that process dies the evaluation stays `running` with the results it recorded. This sweep
 * (run by worker processes, app/main.ts) looks for running evaluations every interval and launches
 * a runner on each one not running here. The runner claims it first: at once when the holder's
 * process is known dead (its worker presence stopped, or missed its heartbeats: the rule run
 * recovery uses), else only once the holder recorded nothing for EVAL_LIMITS.runnerLeaseMs; then it
 * goes on from the first unrecorded case.
 */

export interface EvaluationResumePorts extends EvalRunPorts {
  work: LocalWork<void>;
  /** Evaluations the read model shows running (projections/evals.ts runningEvaluations). */
  running(): Promise<Array<{ _id: string; ownerId: string; orgId: string | null; workspaceId: string | null }>>;
  /** WORKER_HEARTBEAT_MS: a presence that announced no interval of its own is judged by this one. */
  heartbeatMs: number;
}

/**
 * Whether the process holding the evaluation is known dead, from the log (its `worker-` stream and
 * newest beat, as consumers/runs-recovery.ts reads them). A holder with no presence at all is not
 * known dead: the lease decides.
 */
async function holderIsDead(ports: EvaluationResumePorts, holder: string): Promise<boolean> {
  const { state } = await loadState(ports.eventStore, workerStreamId(holder), workerDecider);
  if (!state.exists) return false;
  const [beat] = await ports.eventStore.readStream(heartbeatStreamId(holder), { direction: 'backwards', maxCount: 1 });
  const beatAt = (beat?.data as { at?: string } | undefined)?.at ?? null;
  const lastHeartbeatAt = [state.lastHeartbeatAt, beatAt].filter((t): t is string => t !== null).sort().pop() ?? null;
  return isWorkerDead({ lastHeartbeatAt, stoppedAt: state.stoppedAt, heartbeatMs: state.heartbeatMs }, ports.clock.now(), ports.heartbeatMs);
}

/** One pass: a runner launched for each running evaluation not already running here. Returns how many were launched. */
export async function resumeEvaluations(ports: EvaluationResumePorts, runner: string): Promise<number> {
  let launched = 0;
  for (const e of await ports.running()) {
    if (ports.work.has(e._id)) continue;
    const { state } = await loadState(ports.eventStore, evaluationStreamId(e._id), evaluationDecider);
    if (state.status !== 'running') continue;
    const dead = state.runner !== null && state.runner !== runner && (await holderIsDead(ports, state.runner));
    // The events a resumed runner appends say who asked (the owner) and that a sweep caused them.
    const context = { actorId: e.ownerId, orgId: e.orgId, workspaceId: e.workspaceId, correlationId: `evaluation:${e._id}`, causationId: null, requestId: randomUUID(), now: ports.clock.now() };
    launchEvaluation(ports, ports.work, context, e._id, runner, dead);
    launched++;
  }
  return launched;
}

export function startEvaluationResume(ports: EvaluationResumePorts, runner: string, intervalMs: number): { stop(): void } {
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      await resumeEvaluations(ports, runner);
    } catch (err) {
      ports.logger.warn({ err }, 'evaluation resume sweep failed; next interval tries again');
    } finally {
      busy = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
