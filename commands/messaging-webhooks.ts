import { randomUUID } from 'node:crypto';
import { deliveryDecider, deliveryStreamId, webhookDecider, webhookStreamId, type DeliveryCommand, type WebhookCommand, type WebhookEventName } from '../domain/messaging-webhooks/index.js';
import { DomainError } from '../domain/shared/decider.js';
import { ConcurrencyError, type EventStore } from '../ports/event-store.js';
import type { WebhookSender } from '../ports/messaging-webhooks.js';
import { handleAtContextTime, loadState, metadataOf, type CommandContext, type WithoutAt } from './handle.js';

/** A command on a session's webhook (`msgwebhook-<sessionId>`); the time comes from the context. */
export function executeWebhookCommand(store: EventStore, context: CommandContext, sessionId: string, command: WithoutAt<WebhookCommand>) {
  return handleAtContextTime(store, context, webhookStreamId(sessionId), webhookDecider, command);
}

/**
 * A command on one delivery (`msgdelivery-<deliveryId>`). With `expectedRevision` it is decided
 * on exactly the state the caller judged (an attempt's result), and a stream that moved on answers
 * 412 instead of being decided again.
 */
export function executeDeliveryCommand(store: EventStore, context: CommandContext, deliveryId: string, command: WithoutAt<DeliveryCommand>, expectedRevision?: number) {
  return handleAtContextTime(store, context, deliveryStreamId(deliveryId), deliveryDecider, command, expectedRevision);
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

export interface ConfigureInput {
  sessionId: string;
  webhookId: string;
  url: string;
  events: WebhookEventName[];
  /** The secret sealed by the caller (the route's SealedBox); never in clear in an event. */
  secretSealed: string;
}

/** (Re)configures a session's webhook; a URL outbound HTTP would refuse whatever it resolves to is refused now. */
export function configureWebhook(ports: { eventStore: EventStore; sender: Pick<WebhookSender, 'refusesOutright'> }, context: CommandContext, input: ConfigureInput) {
  if (ports.sender.refusesOutright(input.url)) {
    throw new DomainError('WEBHOOK_URL_REFUSED', 'the webhook URL points to a private or loopback address, which outbound HTTP may not reach', 'invalid', { field: 'body.url' });
  }
  return executeWebhookCommand(ports.eventStore, context, input.sessionId, { type: 'ConfigureWebhook', ...input });
}

/**
 * A person asks for a failed delivery again, through its session. The delivery decider decides on
 * the delivery's state and on the session webhook's state, both folded from their streams.
 */
export async function requestRedelivery(store: EventStore, context: CommandContext, input: { sessionId: string; deliveryId: string; requestedBy: string | null }) {
  const { state: webhook } = await loadWebhook(store, input.sessionId);
  return executeDeliveryCommand(store, context, input.deliveryId, {
    type: 'RequestRedelivery',
    sessionId: input.sessionId,
    webhook: { isActive: webhook.isActive, deactivatedReason: webhook.deactivatedReason },
    requestedBy: input.requestedBy,
  });
}
