/**
 * Snapshots of long streams (a flow edited 100,000 times, a workflow signalled for years): the
 * folded state of `<streamId>` as of one revision, stored as an event of its own stream
 * `snapshot-<streamId>`. A snapshot is a cache, never a fact: it is not part of the audit trail,
 * the log keeps only the newest few (domain/retention.ts), no projector or consumer reads the
 * category, and the Kafka relay does not publish it. Whatever is wrong with one (missing, cut,
 * written by another state version) only means folding from further back.
 */
export const SNAPSHOT_CATEGORY = 'snapshot';

export const SNAPSHOT_EVENT = 'StateSnapshotted';

/** Kept per stream: enough for time travel to land near recent revisions, few enough to stay small. */
export const SNAPSHOTS_KEPT = 10;

export const snapshotStreamId = (streamId: string) => `${SNAPSHOT_CATEGORY}-${streamId}`;

export interface SnapshotData {
  streamId: string;
  /** Revision of the last event folded into `state`. */
  revision: number;
  /** Which evolve made the state (see snapshotTag in commands/snapshots.ts): another tag is ignored. */
  tag: string;
  state: unknown;
}

/** The snapshot's data when it is one of `streamId` made with `tag`, else null (the caller folds from further back). */
export function readSnapshot(event: { type: string; data: unknown }, streamId: string, tag: string): SnapshotData | null {
  if (event.type !== SNAPSHOT_EVENT) return null;
  const d = event.data as Partial<SnapshotData> | null;
  if (d === null || typeof d !== 'object') return null;
  if (d.streamId !== streamId || d.tag !== tag) return null;
  if (!Number.isInteger(d.revision) || d.revision! < 0) return null;
  if (d.state === null || typeof d.state !== 'object') return null;
  return d as SnapshotData;
}
