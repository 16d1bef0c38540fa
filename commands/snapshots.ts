import { createHash, randomUUID } from 'node:crypto';
import { fold, type Decider } from '../domain/shared/decider.js';
import type { DomainEvent } from '../domain/shared/events.js';
import { readSnapshot, SNAPSHOT_EVENT, SNAPSHOTS_KEPT, snapshotStreamId, type SnapshotData } from '../domain/shared/snapshots.js';
import type { EventStore } from '../ports/event-store.js';

/**
 * Snapshots of the folded state of long streams (domain/shared/snapshots.ts): only an
 * optimisation, so every failure here (an unreadable, foreign or oversized snapshot, a store
 * refusing the append) falls back to folding from further back and never fails a command.
 */

export const DEFAULT_SNAPSHOT_EVERY = 500;

/**
 * Above this a state is not snapshotted: EventStoreDB refuses appends over 1 MiB by default (the
 * same margin as a command's own write, MAX_WRITE_BYTES); SQLite takes any size, but a state
 * past a few MiB costs more to write every SNAPSHOT_EVERY events than its fold saves.
 */
const maxSnapshotBytes = (store: EventStore) => (store.adapter === 'sqlite' ? 8 * 1024 * 1024 : 768 * 1024);

// Per store, like the handler's state cache: services of one process (tests) may differ.
const everyByStore = new WeakMap<EventStore, number>();

/** SNAPSHOT_EVERY, set by the composition root: a snapshot once a stream is this many events past its last one; 0 turns snapshots off. */
export function configureSnapshots(store: EventStore, options: { every: number }): void {
  everyByStore.set(store, options.every);
}

export const snapshotEvery = (store: EventStore): number => everyByStore.get(store) ?? DEFAULT_SNAPSHOT_EVERY;

// Module scope is safe: a memo of each decider's tag, computed from the decider alone, the same for every service.
const tags = new WeakMap<object, string | null>();

/**
 * What a snapshot must have been made with to be used: the decider's stateVersion plus a digest
 * of its initial state, so a state that gained a field never starts from a snapshot without it.
 * Null for a decider that is not snapshotted.
 */
export function snapshotTag(decider: Decider<any, any, any>): string | null {
  let tag = tags.get(decider);
  if (tag === undefined) {
    tag = decider.stateVersion === undefined ? null : `v${decider.stateVersion}.${createHash('sha256').update(JSON.stringify(decider.initialState)).digest('hex').slice(0, 16)}`;
    tags.set(decider, tag);
  }
  return tag;
}

/** Whether a stream folded to `revision`, last snapshotted at `snapshotAt` (-1: never), is due a new snapshot. */
export function snapshotDue(store: EventStore, decider: Decider<any, any, any>, revision: number, snapshotAt: number): boolean {
  const every = snapshotEvery(store);
  return every > 0 && snapshotTag(decider) !== null && revision - snapshotAt >= every;
}

/**
 * The newest kept snapshot of `streamId` made by this decider, at or before `atMost` when given
 * (time travel), or null. The highest revision wins, not the last appended: two processes may
 * snapshot one stream at nearly the same time.
 */
export async function findSnapshot<S>(store: EventStore, streamId: string, decider: Decider<any, S, any>, atMost = Number.MAX_SAFE_INTEGER): Promise<{ revision: number; state: S } | null> {
  const tag = snapshotTag(decider);
  if (tag === null || snapshotEvery(store) === 0) return null;
  let kept;
  try {
    kept = await store.readStream(snapshotStreamId(streamId), { direction: 'backwards', maxCount: SNAPSHOTS_KEPT });
  } catch {
    return null;
  }
  let best: SnapshotData | null = null;
  for (const event of kept) {
    const snapshot = readSnapshot(event, streamId, tag);
    if (snapshot && snapshot.revision <= atMost && (!best || snapshot.revision > best.revision)) best = snapshot;
  }
  return best && { revision: best.revision, state: best.state as S };
}

/** Stores the state of `streamId` as of `revision`; false when it was not stored (too large, or the store refused). */
export async function saveSnapshot<S>(store: EventStore, streamId: string, decider: Decider<any, S, any>, revision: number, state: S): Promise<boolean> {
  const tag = snapshotTag(decider);
  if (tag === null) return false;
  const data: SnapshotData = { streamId, revision, tag, state };
  const metadata = { actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, occurredAt: new Date().toISOString() };
  try {
    if (Buffer.byteLength(JSON.stringify(data)) > maxSnapshotBytes(store)) return false;
    await store.append(snapshotStreamId(streamId), [{ id: randomUUID(), type: SNAPSHOT_EVENT, data, metadata }], 'any');
    return true;
  } catch {
    return false;
  }
}

/**
 * The state of `streamId` right after the event of `revision` (time travel), folded from the
 * newest kept snapshot at or before it, else from the first event. `folded` is the revision of
 * the last event folded: below `revision` when the stream is shorter (-1 for no stream).
 */
export async function stateAtRevision<S>(store: EventStore, streamId: string, decider: Decider<any, S, any>, revision: number): Promise<{ state: S; folded: number }> {
  const snapshot = await findSnapshot(store, streamId, decider, revision);
  const from = snapshot ? snapshot.revision + 1 : 0;
  const events = revision < from ? [] : await store.readStream(streamId, { fromRevision: from, maxCount: revision - from + 1 });
  const state = fold(decider.evolve, snapshot ? snapshot.state : decider.initialState, events as unknown as DomainEvent[]);
  return { state, folded: from - 1 + events.length };
}
