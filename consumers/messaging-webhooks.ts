import { createHash, randomUUID } from 'node:crypto';
import type { CommandContext } from '../commands/handle.js';
import { executeWebhookCommand, loadWebhook, scheduleDelivery } from '../commands/messaging-webhooks.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { DELIVERY_CATEGORY, webhookBodyOf, webhookEventTypeOf, wantsEvent, type DeliveryEvent } from '../domain/messaging-webhooks/index.js';
import type { Consumer } from '../ports/bus.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { MessagingWebhooks } from '../ports/messaging-webhooks.js';

export interface WebhooksConsumerPorts {
  eventStore: EventStore;
  clock: Clock;
  /** This process's timers of attempts (and its recovery sweep, started with the consumers). */
  webhooks: Pick<MessagingWebhooks, 'schedule' | 'startWorker'>;
}

const SESSION_CATEGORY = 'msgsession';

/** One delivery per (session event, webhook configuration), whoever derives it and however often. */
export function deliveryIdOf(sourceEventId: string, webhookId: string): string {
  return createHash('sha256').update(`${webhookId}:${sourceEventId}`).digest('hex').slice(0, 32);
}

const contextOf = (clock: Clock, cause: RecordedEvent): CommandContext => ({
  actorId: null,
  orgId: cause.metadata.orgId,
  workspaceId: cause.metadata.workspaceId,
  correlationId: cause.metadata.correlationId,
  causationId: cause.id,
  requestId: randomUUID(),
  now: clock.now(),
});

/**
 * Session events → deliveries. For each event a webhook wants (see domain/messaging-webhooks/payload.ts) it
 * schedules one delivery with the exact body to send; the attempts happen elsewhere (messaging-webhooks-attempt.ts, on the timers), so
 * this consumer never waits on a receiver. A deleted session deactivates its webhook, which stops
 * its pending deliveries at their next attempt.
 */
function webhookDispatcher({ eventStore, clock, webhooks }: WebhooksConsumerPorts): Consumer {
  return {
    name: 'webhook-dispatcher',
    categories: [SESSION_CATEGORY],
    async handle(event) {
      const sessionId = event.streamId.slice(SESSION_CATEGORY.length + 1);
      if (event.type === 'MessagingSessionDeleted') {
        await executeWebhookCommand(eventStore, contextOf(clock, event), sessionId, { type: 'DeactivateWebhook', reason: 'SESSION_DELETED', deliveryId: null, statusCode: null });
        return;
      }
      const type = webhookEventTypeOf(event.type);
      if (!type) return;
      const { state: hook } = await loadWebhook(eventStore, sessionId);
      if (!wantsEvent(hook, type) || !hook.webhookId) return;
      // An event older than the configuration is not this webhook's (the consumer may lag behind).
      if (hook.configuredAt && event.metadata.occurredAt < hook.configuredAt) return;
      const deliveryId = deliveryIdOf(event.id, hook.webhookId);
      const body = JSON.stringify(webhookBodyOf(type, sessionId, event.data as Record<string, unknown>, event.metadata.occurredAt));
      const context = contextOf(clock, event);
      const { scheduled } = await scheduleDelivery(eventStore, context, {
        deliveryId,
        sessionId,
        webhookId: hook.webhookId,
        eventType: type,
        sourceEventId: event.id,
        messageId: `msg_${deliveryId}`,
        body,
      });
      // This worker attempts what it scheduled (and the retries). One already scheduled (a session
      // event seen again) is left to its worker, or to the sweep if that worker died.
      if (scheduled) webhooks.schedule(deliveryId, context.now);
    },
  };
}

/**
 * Redelivery requests (appended by the API, maybe in another process) → the timer wheel of the
 * worker that owns the delivery stream's partition. New deliveries and retries are armed by the
 * worker that scheduled or attempted them; after a crash the sweep re-arms what was lost.
 */
function redeliveryScheduler({ webhooks }: WebhooksConsumerPorts): Consumer {
  return {
    name: 'webhook-redeliveries',
    categories: [DELIVERY_CATEGORY],
    async handle(recorded) {
      const event = recorded as RecordedEvent & DeliveryEvent;
      if (event.type !== 'WebhookRedeliveryRequested') return;
      webhooks.schedule(recorded.streamId.slice(DELIVERY_CATEGORY.length + 1), new Date(event.data.at));
    },
  };
}

/** The messaging webhooks context's reactions in the worker role; starting them starts the recovery sweep too. */
export function webhooksConsumers(ports: WebhooksConsumerPorts, _workerId: string): Consumer[] {
  ports.webhooks.startWorker();
  return [webhookDispatcher(ports), redeliveryScheduler(ports)];
}
