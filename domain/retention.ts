import type { RetentionPolicies } from './shared/retention.js';
import { SNAPSHOTS_KEPT } from './shared/snapshots.js';

/**
 * The only streams the log truncates: operational ones, whose history no one reads, and a run's
 * history once retention summed it up. Every other category (flows, workflows, users, orgs, …) is
 * the audit trail and keeps every event.
 * - `run-<processId>`: a finished run's node events go when retention appends RunHistoryPruned
 *   (consumers/runs-retention.ts, RUN_HISTORY_KEEP_DAYS / RUN_HISTORY_KEEP_LAST or the org's own).
 * - `heartbeat-<workerId>`: liveness needs the newest beat only; 100 beats or a day, whichever is less.
 * - `probe-<id>`: diagnostics of a deployment; a week.
 * - `terminalbeat-<terminalId>`: a remote terminal's liveness needs its newest beat only; 10 beats, no age limit
 *   (the last beat of a terminal offline for a month still says when it was last seen).
 * - `snapshot-<streamId>`: folded states of long streams, a cache and no part of the audit trail
 *   (domain/shared/snapshots.ts); the newest few serve the handler and time travel.
 */
export const allRetentionPolicies = {
  heartbeat: { maxCount: 100, maxAgeSeconds: 24 * 3600 },
  probe: { maxAgeSeconds: 7 * 24 * 3600 },
  terminalbeat: { maxCount: 10 },
  snapshot: { maxCount: SNAPSHOTS_KEPT },
  run: { summarizedBy: 'RunHistoryPruned' },
} as const satisfies RetentionPolicies;
