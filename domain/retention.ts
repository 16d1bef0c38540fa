import type { RetentionPolicies } from './shared/retention.js';

/**
 * The only streams the log truncates: operational ones, whose history no one reads. Every other
 * category (flows, runs, users, …) is the audit trail and keeps every event.
 * - `heartbeat-<workerId>`: liveness needs the newest beat only; 100 beats or a day, whichever is less.
 * - `probe-<id>`: diagnostics of a deployment; a week.
 */
export const allRetentionPolicies = {
  heartbeat: { maxCount: 100, maxAgeSeconds: 24 * 3600 },
  probe: { maxAgeSeconds: 7 * 24 * 3600 },
} as const satisfies RetentionPolicies;
