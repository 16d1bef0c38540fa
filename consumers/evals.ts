import { randomUUID } from 'node:crypto';
import { launchEvaluation, type EvalRunPorts } from '../commands/evals-run.js';
import type { LocalWork } from '../ports/local-work.js';

/**
 * Evaluations survive a restart: an evaluation's runner lives in the service that asked for it, so
 * when that process dies the evaluation stays `running` with the results it recorded. This sweep
 * (run by worker processes, app/main.ts) looks for running evaluations every interval and launches
 * a runner on each one not running here; the runner's claim is refused while the old holder is
 * within its lease (EVAL_LIMITS.runnerLeaseMs), then it goes on from the first unrecorded case.
 */

export interface EvaluationResumePorts extends EvalRunPorts {
  work: LocalWork<void>;
  /** Evaluations the read model shows running (projections/evals.ts runningEvaluations). */
  running(): Promise<Array<{ _id: string; ownerId: string; orgId: string | null; workspaceId: string | null }>>;
}

/** One pass: a runner launched for each running evaluation not already running here. Returns how many were launched. */
export async function resumeEvaluations(ports: EvaluationResumePorts, runner: string): Promise<number> {
  let launched = 0;
  for (const e of await ports.running()) {
    if (ports.work.has(e._id)) continue;
    // The events a resumed runner appends say who asked (the owner) and that a sweep caused them.
    const context = { actorId: e.ownerId, orgId: e.orgId, workspaceId: e.workspaceId, correlationId: `evaluation:${e._id}`, causationId: null, requestId: randomUUID(), now: ports.clock.now() };
    launchEvaluation(ports, ports.work, context, e._id, runner);
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
