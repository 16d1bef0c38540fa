import type { RetentionPolicies } from './shared/retention.js';

/**
 * The only streams the log truncates: operational ones, whose history no one reads. Every other
 * category (flows, runs, users, …) is the audit trail and keeps every event.
 * - `heartbeat-<workerId>`: liveness needs the newest beat only; 100 beats or a day, whichever is less.
 * - `probe-<id>`: diagnostics of a deployment; a week.
 * - `terminalbeat-<terminalId>`: a remote terminal's liveness needs its newest beat only; 10 beats, no age limit
 *   (the last beat of a terminal offline for a month still says when it was last seen).
 */
export const allRetentionPolicies = {
  heartbeat: { maxCount: 100, maxAgeSeconds: 24 * 3600 },
  probe: { maxAgeSeconds: 7 * 24 * 3600 },
  terminalbeat: { maxCount: 10 },
} as const satisfies RetentionPolicies;
