import { deliveryDecider, deliveryStreamId, webhookDecider, webhookStreamId, type DeliveryCommand, type WebhookCommand } from '../domain/messaging-webhooks/index.js';
import { randomUUID } from 'node:crypto';
import { ConcurrencyError, type EventStore } from '../infra/ports/event-store.js';
import { handleCommand, loadState, metadataOf, type CommandContext } from './handle.js';

type WithoutAt<C> = C extends unknown ? Omit<C, 'at'> : never;

/** A command on a session's webhook (`msgwebhook-<sessionId>`); the time comes from the context. */
export function executeWebhookCommand(store: EventStore, context: CommandContext, sessionId: string, command: WithoutAt<WebhookCommand>) {
  return handleCommand(store, {
    streamId: webhookStreamId(sessionId),
    decider: webhookDecider,
    command: { ...command, at: context.now.toISOString() } as WebhookCommand,
    context,
  });
}

/**
 * A command on one delivery (`msgdelivery-<deliveryId>`). With `expectedRevision` it is decided
 * on exactly the state the caller judged (an attempt's result), and a stream that moved on answers
 * 412 instead of being decided again.
 */
export function executeDeliveryCommand(store: EventStore, context: CommandContext, deliveryId: string, command: WithoutAt<DeliveryCommand>, expectedRevision?: number) {
  return handleCommand(store, {
    streamId: deliveryStreamId(deliveryId),
    decider: deliveryDecider,
    command: { ...command, at: context.now.toISOString() } as DeliveryCommand,
    context,
    expectedRevision,
  });
}

export const loadWebhook = (store: EventStore, sessionId: string) => loadState(store, webhookStreamId(sessionId), webhookDecider);
export const loadDelivery = (store: EventStore, deliveryId: string) => loadState(store, deliveryStreamId(deliveryId), deliveryDecider);

/**
 * Schedules a delivery in one append that requires the stream not to exist: no read first (the
 * dispatcher's hot path). Answers false when the delivery was scheduled before (a redelivered
 * session event), which is not an error.
 */
export async function scheduleDelivery(store: EventStore, context: CommandContext, command: Omit<Extract<DeliveryCommand, { type: 'ScheduleDelivery' }>, 'type' | 'at'>): Promise<{ scheduled: boolean; position: number | null }> {
  const events = deliveryDecider.decide({ type: 'ScheduleDelivery', ...command, at: context.now.toISOString() }, deliveryDecider.initialState);
  const metadata = metadataOf(context);
  try {
    const result = await store.append(
      deliveryStreamId(command.deliveryId),
      events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })),
      'no_stream',
    );
    return { scheduled: true, position: result.position };
  } catch (err) {
    if (err instanceof ConcurrencyError) return { scheduled: false, position: null };
    throw err;
  }
}
