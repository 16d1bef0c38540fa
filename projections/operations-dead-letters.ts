import { DEAD_LETTER_CATEGORY, storedText, type DeadLetterEvent, type DeadLetterKind, type UndecodableMessage } from '../domain/operations/dead-letters.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { DuplicateKeyError, type Doc, type Filter, type ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

export type DeadLetterStatus = 'open' | 'resolved' | 'discarded';

export interface DeadLetterView extends Doc {
  /** Absent on documents projected before undecodable letters existed: `event`. */
  kind?: DeadLetterKind;
  consumer: string;
  /** The failed event's fields; null for an undecodable message. */
  eventId: string | null;
  eventType: string | null;
  streamId: string | null;
  revision: number | null;
  position: number | null;
  /** The raw message of an undecodable letter (bytes in base64); absent for an event. */
  message?: UndecodableMessage | null;
  status: DeadLetterStatus;
  /** Failed handler calls in all: delivery rounds plus failed retries. */
  attempts: number;
  lastError: string;
  firstFailedAt: string;
  lastFailedAt: string;
  retries: number;
  resolvedAt: string | null;
  discardedAt?: string | null;
  discardReason?: string | null;
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
              // storedText here too: letters recorded before it existed may hold NUL, which FerretDB refuses.
              $set: { kind: 'event', status: 'open', lastError: storedText(error), lastFailedAt, resolvedAt: null, discardedAt: null, discardReason: null, version: recorded.revision },
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
      case 'UndecodableMessageDeadLettered': {
        const { consumer, message, error, at } = event.data;
        try {
          await letters.updateOne(
            guard,
            {
              // The null event fields in $set, not $setOnInsert: FerretDB drops null values from $setOnInsert.
              $set: { kind: 'undecodable', status: 'open', lastError: error, lastFailedAt: at, resolvedAt: null, discardedAt: null, discardReason: null, eventId: null, eventType: null, streamId: null, revision: null, position: null, version: recorded.revision },
              $inc: { attempts: 1 },
              $setOnInsert: { consumer, message, firstFailedAt: at, retries: 0 },
            },
            { upsert: true },
          );
        } catch (err) {
          if (!(err instanceof DuplicateKeyError)) throw err;
        }
        return;
      }
      case 'DeadLetterDiscarded':
        await letters.updateOne(guard, { $set: { status: 'discarded', discardedAt: event.data.at, discardReason: event.data.reason, version: recorded.revision } });
        return;
      case 'DeadLetterResolved':
        await letters.updateOne(guard, { $set: { status: 'resolved', resolvedAt: event.data.at, version: recorded.revision }, $inc: { retries: 1 } });
        return;
      case 'DeadLetterRetryFailed':
        await letters.updateOne(guard, { $set: { lastError: storedText(event.data.error), lastFailedAt: event.data.at, version: recorded.revision }, $inc: { attempts: 1, retries: 1 } });
        return;
      default:
        return;
    }
  },
};

export function getDeadLetter(store: ReadStore, deadLetterId: string) {
  return store.collection<DeadLetterView>(COLLECTION).findOne({ _id: deadLetterId });
}

export function listDeadLetters(store: ReadStore, filter: { consumer?: string; status?: DeadLetterStatus }, limit: number, cursor: string | null) {
  const query: Filter = {};
  if (filter.consumer) query.consumer = filter.consumer;
  if (filter.status) query.status = filter.status;
  return store.collection<DeadLetterView>(COLLECTION).page(query, { sort: { lastFailedAt: -1 }, limit, cursor });
}

/** The dead-letter metric: letters per consumer and status, read from the model (durable, cluster-wide). */
export async function countDeadLetters(store: ReadStore): Promise<Record<string, Record<DeadLetterStatus, number>>> {
  const docs = await store.collection<DeadLetterView>(COLLECTION).find({}, { projection: { consumer: 1, status: 1 } });
  const counts: Record<string, Record<DeadLetterStatus, number>> = {};
  for (const { consumer, status } of docs) {
    counts[consumer] ??= { open: 0, resolved: 0, discarded: 0 };
    counts[consumer][status] += 1;
  }
  return counts;
}
