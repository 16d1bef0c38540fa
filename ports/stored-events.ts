import type { RecordedEvent } from '../domain/shared/events.js';

/**
 * The event log as stored, beneath the upcasters, for the one operation that repairs what was
 * written: re-sealing node secrets stored in clear (commands/flows-secrets.ts). Everything else
 * reads through the EventStore port.
 */
export interface StoredEvents {
  /** Which store this is, for the operator's answer (`sqlite`, `eventstoredb`). */
  readonly adapter: string;
  /** Events strictly after `after` in `categories`, in log order, exactly as stored (no upcasting, no cache). */
  read(options: { after?: number; maxCount: number; categories: string[] }): Promise<RecordedEvent[]>;
  /**
   * Replaces stored events' data and schema version in place, by position, and wipes the old
   * bytes from the store's files. Null where the store is append-only (EventStoreDB): there the
   * old events stay and reads mask them.
   */
  rewrite: ((events: Array<{ position: number; data: unknown; schemaVersion: number }>) => Promise<void>) | null;
}
