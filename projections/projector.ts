import type { RecordedEvent } from '../domain/shared/events.js';
import type { IndexSpec, ReadStore } from '../ports/read-store.js';

/**
 * One projector per read model. `project` must be idempotent: on the distributed adapters an event
 * can be projected twice (checkpoint after write), so write absolute values keyed by ids, or guard
 * with the event's position.
 */
export interface Projector {
  /** Read model name; also the checkpoint key and the admin route's `{name}`. */
  name: string;
  /** Stream categories this projector reads (`probe` reads `probe-…`). */
  categories: string[];
  /** Collections it owns; a rebuild drops them. */
  collections: string[];
  setup(store: ReadStore): Promise<void>;
  project(event: RecordedEvent, store: ReadStore): Promise<void>;
  /**
   * Projects events the runner took together (in log order, several streams mixed), usually with
   * one bulk write; the runner checkpoints once after it. Optional: without it the runner calls
   * `project` for each event. Must leave the same read model as projecting them one by one, and
   * stay idempotent: after a failure the whole batch is projected again from the last checkpoint.
   */
  projectBatch?(events: RecordedEvent[], store: ReadStore): Promise<void>;
  /**
   * How long a batch may wait for more events while nobody waits to read what it holds (ms;
   * default 0: a batch is what arrived meanwhile). For read models rewritten whole per stream (a
   * run's document): a 50-node run otherwise rewrites its growing document once per node. A
   * read-your-writes wait in this process ends the wait at once; elsewhere (a split deployment's
   * API) it may see the read model up to this much later.
   */
  coalesceMs?: number;
  /**
   * False for a read model no request reads back after its own write (retention's candidates, read
   * by a periodic sweep): a read-your-writes wait does not wait for it, so it coalesces its batches
   * even while requests wait on the other projectors of its categories. Default true.
   */
  readYourWrites?: boolean;
}

/** `projector.projectBatch`, or `project` event by event, telling `projected` after each one. */
export async function projectAll(projector: Projector, events: RecordedEvent[], store: ReadStore, projected?: (event: RecordedEvent) => void): Promise<void> {
  if (projector.projectBatch) return projector.projectBatch(events, store);
  for (const event of events) {
    await projector.project(event, store);
    projected?.(event);
  }
}

/**
 * A projector's `collections` and `setup` from one table: each collection it owns (in order) with
 * the indexes `setup` creates on it, in order.
 */
export function ownedCollections(indexes: Record<string, IndexSpec[]>): Pick<Projector, 'collections' | 'setup'> {
  return {
    collections: Object.keys(indexes),
    async setup(store) {
      for (const [name, specs] of Object.entries(indexes)) for (const spec of specs) await store.collection(name).createIndex(spec);
    },
  };
}
