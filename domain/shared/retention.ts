/**
 * How long an operational stream keeps its events, with EventStoreDB's `$maxCount` / `$maxAge`
 * meaning. Only streams whose history nobody needs (heartbeats, diagnostics) get one: business
 * streams are the audit trail and are never truncated.
 */
export interface StreamRetention {
  maxCount?: number;
  maxAgeSeconds?: number;
}

/** Retention per stream category (`heartbeat` applies to `heartbeat-…`). */
export type RetentionPolicies = Readonly<Record<string, StreamRetention>>;
