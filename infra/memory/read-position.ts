import type { CheckpointStore } from '../../ports/read-store.js';
import type { EventStore } from '../../ports/event-store.js';

/** The memory projector's checkpoint (app/projection-runner.ts keys it `projection:<name>`). */
const MEMORY_CHECKPOINT = 'projection:memory';
const CATEGORY = 'memory';
/** Events read per page while finding the newest memory event. */
const PAGE = 256;

/**
 * Read-your-writes by position for memory reads. Memory writes answer once appended, without
 * waiting for the projection; a read (search, delete by scope, history) first finds the position
 * of the newest memory event in the log and waits until the memory projection reached it. Every
 * write acknowledged before the read began is at or below that position, so the read shows it,
 * whichever API process took the write.
 *
 * Finding it reads only what the projection has not reached yet: the log after the larger of the
 * projector's checkpoint and the newest position this process already found, in the memory
 * category (usually nothing or a few events).
 */
export function memoryReadPosition(events: EventStore, checkpoints: CheckpointStore): () => Promise<number> {
  let known = 0;
  return async () => {
    let from = Math.max(known, (await checkpoints.get(MEMORY_CHECKPOINT)) ?? 0);
    for (;;) {
      const page = await events.readAll({ after: from, categories: [CATEGORY], maxCount: PAGE });
      if (page.length > 0) from = page[page.length - 1].position;
      if (page.length < PAGE) break;
    }
    known = Math.max(known, from);
    return from;
  };
}
