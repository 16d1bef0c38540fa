import { decider, type Decider } from '../shared/decider.js';
import { decideDelivery, type DeliveryCommand } from './decide-delivery.js';
import { decideWebhook, type WebhookCommand } from './decide-webhook.js';
import { deliveryEventSchemas, webhookEventSchemas, type DeliveryEvent, type WebhookEvent } from './events.js';
import { evolveDelivery, initialDeliveryState, type DeliveryState } from './state-delivery.js';
import { evolveWebhook, initialWebhookState, type WebhookState } from './state-webhook.js';

export * from './events.js';
export * from './state-webhook.js';
export * from './decide-webhook.js';
export * from './state-delivery.js';
export * from './decide-delivery.js';
export * from './retry.js';
export * from './payload.js';

/** `msgwebhook-<sessionId>`: the session's one webhook. */
export const webhookDecider: Decider<WebhookCommand, WebhookState, WebhookEvent> = decider(initialWebhookState, evolveWebhook, decideWebhook, webhookEventSchemas);

/** `msgdelivery-<deliveryId>`: one delivery of one session event, every attempt in it. */
export const deliveryDecider: Decider<DeliveryCommand, DeliveryState, DeliveryEvent> = {
  ...decider(initialDeliveryState, evolveDelivery, decideDelivery, deliveryEventSchemas),
  // Delivered or failed: read again only if someone redelivers it.
  settled: (state) => state.exists && state.status !== 'pending',
};
