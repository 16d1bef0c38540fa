import type { FlowScope } from '../domain/flows/index.js';
import { ACTIVE_STATUSES } from '../domain/runs/state.js';
import { OPEN_STATUSES } from '../domain/workflows/state.js';
import type { Doc, Filter, ReadStore } from '../ports/read-store.js';
import { tenantFilter } from './system.js';

/**
 * Flow runs and workflows side by side (GET /hybrid/stats), for the caller's scope over a window,
 * from the runs read model (`processes`) and the workflows one (`workflows`). Durations are
 * start → end of the executions that ended in the window, exact nearest-rank percentiles over the
 * newest DURATION_SAMPLE of them (`sampled: true` when there were more).
 */

export const DURATION_SAMPLE = 10_000;

export interface ExecutionStats {
  /** Started within the window. */
  started: number;
  /** Ended within the window, by outcome. */
  completed: number;
  /** Failed or timed out. */
  failed: number;
  /** Stopped (runs), canceled or terminated (workflows). */
  canceled: number;
  /** Not ended now (queued/running; created/running/paused), whenever they started. */
  open: number;
  durationMs: { p50: number | null; p95: number | null; samples: number; sampled: boolean };
}

interface Shape {
  collection: string;
  startedAt: string;
  endedAt: string;
  completed: string[];
  failed: string[];
  canceled: string[];
  open: string[];
}

const RUNS: Shape = { collection: 'processes', startedAt: 'startedAt', endedAt: 'finishedAt', completed: ['completed'], failed: ['failed', 'timed_out'], canceled: ['stopped'], open: [...ACTIVE_STATUSES] };
const WORKFLOWS: Shape = {
  collection: 'workflows',
  startedAt: 'startedAt',
  endedAt: 'closedAt',
  completed: ['COMPLETED'],
  failed: ['FAILED', 'TIMED_OUT'],
  canceled: ['CANCELED', 'TERMINATED'],
  open: [...OPEN_STATUSES],
};

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

async function statsOf(store: ReadStore, shape: Shape, tenant: Filter, from: string): Promise<ExecutionStats> {
  const c = store.collection<Doc>(shape.collection);
  const ended = (statuses: string[]) => c.count({ ...tenant, status: { $in: statuses }, [shape.endedAt]: { $gte: from } });
  const [started, completed, failed, canceled, open, finished] = await Promise.all([
    c.count({ ...tenant, [shape.startedAt]: { $gte: from } }),
    ended(shape.completed),
    ended(shape.failed),
    ended(shape.canceled),
    c.count({ ...tenant, status: { $in: shape.open } }),
    c.find({ ...tenant, [shape.endedAt]: { $gte: from } }, { sort: { [shape.endedAt]: -1 }, limit: DURATION_SAMPLE + 1, projection: { [shape.startedAt]: 1, [shape.endedAt]: 1 } }),
  ]);
  const durations = finished
    .slice(0, DURATION_SAMPLE)
    .map((d) => Date.parse(String(d[shape.endedAt])) - Date.parse(String(d[shape.startedAt])))
    .filter((ms) => Number.isFinite(ms) && ms >= 0)
    .sort((a, b) => a - b);
  return {
    started,
    completed,
    failed,
    canceled,
    open,
    durationMs: { p50: percentile(durations, 0.5), p95: percentile(durations, 0.95), samples: durations.length, sampled: finished.length > DURATION_SAMPLE },
  };
}

export async function hybridStats(store: ReadStore, scope: FlowScope, from: Date) {
  const tenant = tenantFilter(scope);
  const since = from.toISOString();
  const [runs, workflows] = await Promise.all([statsOf(store, RUNS, tenant, since), statsOf(store, WORKFLOWS, tenant, since)]);
  const total = {
    started: runs.started + workflows.started,
    completed: runs.completed + workflows.completed,
    failed: runs.failed + workflows.failed,
    canceled: runs.canceled + workflows.canceled,
    open: runs.open + workflows.open,
  };
  return { runs, workflows, total };
}
