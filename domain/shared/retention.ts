/**
 * How long an operational stream keeps its events, with EventStoreDB's `$maxCount` / `$maxAge`
 * meaning. Only streams whose history nobody needs (heartbeats, diagnostics) get one: business
 * streams are the audit trail and are never truncated.
 */
export interface StreamRetention {
  maxCount?: number;
  maxAgeSeconds?: number;
  /**
   * An event type that sums up its stream so far (a pruned run's RunHistoryPruned): appending it
   * deletes every earlier event of its stream, in the same transaction where the store allows
   * (EventStoreDB: `$tb` set right after the append). Nothing else of the category is truncated.
   */
  summarizedBy?: string;
}

/** Retention per stream category (`heartbeat` applies to `heartbeat-…`). */
export type RetentionPolicies = Readonly<Record<string, StreamRetention>>;
