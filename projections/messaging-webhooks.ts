import type { RecordedEvent } from '../domain/shared/events.js';
import {
  DELIVERY_CATEGORY,
  WEBHOOK_CATEGORY,
  type AttemptOutcome,
  type DeactivationReason,
  type DeliveryEvent,
  type DeliveryStatus,
  type WebhookEvent,
  type WebhookEventName,
  type WebhookEventType,
} from '../domain/messaging-webhooks/index.js';
import { DuplicateKeyError, type Doc, type ReadStore, type WriteOp } from '../ports/read-store.js';
import { ownedCollections, type Projector } from './projector.js';

/** Attempts kept per delivery in the read model (the stream keeps them all). */
export const MAX_ATTEMPTS_SHOWN = 50;

export interface AttemptView {
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  outcome: AttemptOutcome;
  at: string;
}

export interface DeliveryDoc extends Doc {
  sessionId: string;
  messageId: string;
  eventType: WebhookEventType;
  status: DeliveryStatus;
  attemptCount: number;
  attempts: AttemptView[];
  nextAttemptAt: string | null;
  /** Why it failed without an attempt (the webhook was inactive), else null. */
  cancelReason: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export interface WebhookDoc extends Doc {
  url: string;
  events: WebhookEventName[];
  isActive: boolean;
  deactivatedReason: DeactivationReason | null;
  consecutiveFailures: number;
  configuredAt: string;
  updatedAt: string;
  version: number;
}

const DELIVERIES = 'messaging_webhook_deliveries';
const WEBHOOKS = 'messaging_webhooks';
const idOf = (streamId: string) => streamId.slice(streamId.indexOf('-') + 1);

const deliveriesProjector: Projector = {
  name: 'messaging-webhook-deliveries',
  categories: [DELIVERY_CATEGORY],
  // A session's deliveries newest first (listDeliveries, with or without a status); the sweep's overdue ones (overdueDeliveries).
  ...ownedCollections({ [DELIVERIES]: [{ keys: { sessionId: 1, createdAt: -1 } }, { keys: { status: 1, nextAttemptAt: 1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & DeliveryEvent;
    const deliveries = store.collection<DeliveryDoc>(DELIVERIES);
    const id = idOf(recorded.streamId);
    const doc = await deliveries.findOne({ _id: id });
    if (doc && doc.version >= recorded.revision) return; // already projected (redelivered event)
    const next = nextDeliveryDoc(doc, event, id, recorded.revision);
    if (next) await deliveries.replaceOne({ _id: id }, next, { upsert: true });
  },
  projectBatch: projectDeliveries,
};

/**
 * A batch of delivery events with one bulk write: each delivery's events are folded onto its
 * document (read first, in parallel, unless the batch schedules it), skipping those its version
 * already holds (a redelivered event). A delivery scheduled in this batch is inserted, which is far
 * cheaper than an upsert on FerretDB 1.24/SQLite; an insert that finds the document there (a
 * redelivered batch) falls back to event by event (`project`, idempotent by version).
 */
async function projectDeliveries(events: RecordedEvent[], store: ReadStore): Promise<void> {
  const deliveries = store.collection<DeliveryDoc>(DELIVERIES);
  const byId = new Map<string, RecordedEvent[]>();
  for (const e of events) {
    const id = idOf(e.streamId);
    byId.set(id, [...(byId.get(id) ?? []), e]);
  }
  const writes = await Promise.all(
    [...byId].map(async ([id, own]): Promise<WriteOp<DeliveryDoc> | null> => {
      const scheduledHere = own[0].type === 'WebhookDeliveryScheduled' && own[0].revision === 0;
      const stored = scheduledHere ? null : await deliveries.findOne({ _id: id });
      let doc = stored;
      for (const e of own) {
        if (doc && doc.version >= e.revision) continue;
        doc = nextDeliveryDoc(doc, e as RecordedEvent & DeliveryEvent, id, e.revision) ?? doc;
      }
      if (!doc || doc === stored) return null;
      return scheduledHere ? { insertOne: { document: doc } } : { replaceOne: { filter: { _id: id }, replacement: doc, upsert: true } };
    }),
  );
  const ops = writes.filter((w): w is WriteOp<DeliveryDoc> => w !== null);
  if (ops.length === 0) return;
  try {
    await deliveries.bulkWrite(ops);
  } catch (err) {
    if (!(err instanceof DuplicateKeyError)) throw err;
    for (const e of events) await deliveriesProjector.project(e, store);
  }
}

function nextDeliveryDoc(doc: DeliveryDoc | null, event: DeliveryEvent, id: string, version: number): DeliveryDoc | null {
  if (event.type === 'WebhookDeliveryScheduled') {
    const d = event.data;
    return { _id: id, sessionId: d.sessionId, messageId: d.messageId, eventType: d.eventType, status: 'pending', attemptCount: 0, attempts: [], nextAttemptAt: d.nextAttemptAt, cancelReason: null, createdAt: d.at, updatedAt: d.at, version };
  }
  if (!doc) return null;
  switch (event.type) {
    case 'WebhookDeliveryAttempted': {
      const { attempt, statusCode, error, durationMs, outcome, at, nextAttemptAt } = event.data;
      const attempts = [...doc.attempts, { attempt, statusCode, error, durationMs, outcome, at }].slice(-MAX_ATTEMPTS_SHOWN);
      const status: DeliveryStatus = outcome === 'retry' ? 'pending' : outcome;
      return { ...doc, status, attemptCount: attempt, attempts, nextAttemptAt, updatedAt: at, version };
    }
    case 'WebhookDeliveryCancelled':
      return { ...doc, status: 'failed', nextAttemptAt: null, cancelReason: event.data.reason, updatedAt: event.data.at, version };
    case 'WebhookRedeliveryRequested':
      return { ...doc, status: 'pending', nextAttemptAt: event.data.at, cancelReason: null, updatedAt: event.data.at, version };
    default:
      return null;
  }
}

const webhooksProjector: Projector = {
  name: 'messaging-webhooks',
  categories: [WEBHOOK_CATEGORY],
  // Read by `_id` only (getWebhook).
  ...ownedCollections({ [WEBHOOKS]: [] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & WebhookEvent;
    const webhooks = store.collection<WebhookDoc>(WEBHOOKS);
    const id = idOf(recorded.streamId);
    const guard = { _id: id, version: { $lt: recorded.revision } };
    switch (event.type) {
      case 'WebhookConfigured': {
        const d = event.data;
        const doc: WebhookDoc = { _id: id, url: d.url, events: d.events, isActive: true, deactivatedReason: null, consecutiveFailures: 0, configuredAt: d.at, updatedAt: d.at, version: recorded.revision };
        const existing = await webhooks.findOne({ _id: id });
        if (!existing || existing.version < recorded.revision) await webhooks.replaceOne({ _id: id }, doc, { upsert: true });
        return;
      }
      case 'WebhookDeliveryFailureCounted':
        await webhooks.updateOne(guard, { $set: { consecutiveFailures: event.data.consecutiveFailures, updatedAt: event.data.at, version: recorded.revision } });
        return;
      case 'WebhookFailuresReset':
        await webhooks.updateOne(guard, { $set: { consecutiveFailures: 0, updatedAt: event.data.at, version: recorded.revision } });
        return;
      case 'WebhookDeactivated':
        await webhooks.updateOne(guard, { $set: { isActive: false, deactivatedReason: event.data.reason, updatedAt: event.data.at, version: recorded.revision } });
        return;
    }
  },
};

export const webhooksProjectors: Projector[] = [webhooksProjector, deliveriesProjector];

export function getWebhook(store: ReadStore, sessionId: string) {
  return store.collection<WebhookDoc>(WEBHOOKS).findOne({ _id: sessionId });
}

/** A delivery's document folded from its own stream's events (in revision order), as the projector builds it. */
export function deliveryDocOf(deliveryId: string, events: RecordedEvent[]): DeliveryDoc | null {
  let doc: DeliveryDoc | null = null;
  for (const e of events) doc = nextDeliveryDoc(doc, e as RecordedEvent & DeliveryEvent, deliveryId, e.revision) ?? doc;
  return doc;
}

export function getDelivery(store: ReadStore, deliveryId: string) {
  return store.collection<DeliveryDoc>(DELIVERIES).findOne({ _id: deliveryId });
}

/** A session's deliveries, newest first. */
export function listDeliveries(store: ReadStore, sessionId: string, status: DeliveryStatus | undefined, limit: number, cursor: string | null) {
  const filter = status ? { sessionId, status } : { sessionId };
  return store.collection<DeliveryDoc>(DELIVERIES).page(filter, { sort: { createdAt: -1 }, limit, cursor });
}

/** Pending deliveries whose next attempt was due at `dueBefore` or earlier, the most overdue first. */
export function overdueDeliveries(store: ReadStore, dueBefore: Date, limit: number) {
  return store.collection<DeliveryDoc>(DELIVERIES).find({ status: 'pending', nextAttemptAt: { $lte: dueBefore.toISOString() } }, { sort: { nextAttemptAt: 1 }, limit });
}
