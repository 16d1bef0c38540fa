import { DEAD_LETTER_CATEGORY, type DeadLetterEvent } from '../domain/operations/dead-letters.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { DuplicateKeyError, type Doc, type Filter, type ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

export interface DeadLetterView extends Doc {
  consumer: string;
  eventId: string;
  eventType: string;
  streamId: string;
  revision: number;
  position: number;
  status: 'open' | 'resolved';
  /** Failed handler calls in all: delivery rounds plus failed retries. */
  attempts: number;
  lastError: string;
  firstFailedAt: string;
  lastFailedAt: string;
  retries: number;
  resolvedAt: string | null;
  version: number;
}

const COLLECTION = 'dead_letters';

/** Idempotent: every write is guarded by the stream revision it comes from. */
export const deadLettersProjector: Projector = {
  name: 'dead-letters',
  categories: [DEAD_LETTER_CATEGORY],
  ...ownedCollections({ [COLLECTION]: [{ keys: { consumer: 1, lastFailedAt: -1 } }, { keys: { lastFailedAt: -1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & DeadLetterEvent;
    const letters = store.collection<DeadLetterView>(COLLECTION);
    const _id = event.data.deadLetterId;
    const guard = { _id, version: { $lt: recorded.revision } };
    switch (event.type) {
      case 'EventDeadLettered': {
        const { consumer, event: failed, error, attempts, firstFailedAt, lastFailedAt } = event.data;
        try {
          await letters.updateOne(
            guard,
            {
              $set: { status: 'open', lastError: error, lastFailedAt, resolvedAt: null, version: recorded.revision },
              $inc: { attempts },
              $setOnInsert: { consumer, eventId: failed.id, eventType: failed.type, streamId: failed.streamId, revision: failed.revision, position: failed.position, firstFailedAt, retries: 0 },
            },
            { upsert: true },
          );
        } catch (err) {
          // The document exists at this revision or later: this event was projected already.
          if (!(err instanceof DuplicateKeyError)) throw err;
        }
        return;
      }
      case 'DeadLetterResolved':
        await letters.updateOne(guard, { $set: { status: 'resolved', resolvedAt: event.data.at, version: recorded.revision }, $inc: { retries: 1 } });
        return;
      case 'DeadLetterRetryFailed':
        await letters.updateOne(guard, { $set: { lastError: event.data.error, lastFailedAt: event.data.at, version: recorded.revision }, $inc: { attempts: 1, retries: 1 } });
        return;
      default:
        return;
    }
  },
};

export function getDeadLetter(store: ReadStore, deadLetterId: string) {
  return store.collection<DeadLetterView>(COLLECTION).findOne({ _id: deadLetterId });
}

export function listDeadLetters(store: ReadStore, filter: { consumer?: string; status?: 'open' | 'resolved' }, limit: number, cursor: string | null) {
  const query: Filter = {};
  if (filter.consumer) query.consumer = filter.consumer;
  if (filter.status) query.status = filter.status;
  return store.collection<DeadLetterView>(COLLECTION).page(query, { sort: { lastFailedAt: -1 }, limit, cursor });
}

/** The dead-letter metric: letters per consumer and status, read from the model (durable, cluster-wide). */
export async function countDeadLetters(store: ReadStore): Promise<Record<string, { open: number; resolved: number }>> {
  const docs = await store.collection<DeadLetterView>(COLLECTION).find({}, { projection: { consumer: 1, status: 1 } });
  const counts: Record<string, { open: number; resolved: number }> = {};
  for (const { consumer, status } of docs) {
    counts[consumer] ??= { open: 0, resolved: 0 };
    counts[consumer][status] += 1;
  }
  return counts;
}
