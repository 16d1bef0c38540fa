import { z } from 'zod';

/**
 * Two aggregates:
 * - `msgwebhook-<sessionId>`: the session's one webhook (configuration, activity, the run of
 *   consecutive failed deliveries). Written on configuration and on delivery failures only, so the
 *   happy path never contends on it.
 * - `msgdelivery-<deliveryId>`: one delivery of one session event to the webhook, every attempt
 *   in it. One stream per delivery: deliveries never contend with each other, and a crash leaves
 *   each one's state (pending, next attempt time) complete in its own stream.
 */

/** Names a webhook subscribes to; `*` stands for all of them. */
export const WEBHOOK_EVENT_TYPES = ['message', 'message_ack', 'session.status'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export const WEBHOOK_EVENT_NAMES = [...WEBHOOK_EVENT_TYPES, '*'] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];

export const webhookEventNameSchema = z.enum(WEBHOOK_EVENT_NAMES);

export const DEACTIVATION_REASONS = ['GONE', 'TOO_MANY_FAILURES', 'SESSION_DELETED'] as const;
export type DeactivationReason = (typeof DEACTIVATION_REASONS)[number];

export const webhookEventSchemas = {
  WebhookConfigured: z.object({
    sessionId: z.string(),
    /** New on every configuration: tells deliveries made for an earlier configuration apart. */
    webhookId: z.string(),
    url: z.string(),
    events: z.array(webhookEventNameSchema),
    /** The secret sealed with the service's key (SealedBox); never in clear. */
    secretSealed: z.string(),
    at: z.string(),
  }),
  WebhookDeliveryFailureCounted: z.object({ deliveryId: z.string(), consecutiveFailures: z.number().int().positive(), at: z.string() }),
  WebhookFailuresReset: z.object({ deliveryId: z.string(), at: z.string() }),
  WebhookDeactivated: z.object({
    reason: z.enum(DEACTIVATION_REASONS),
    deliveryId: z.string().nullable(),
    statusCode: z.number().int().nullable(),
    at: z.string(),
  }),
};

export type WebhookEvent =
  | { type: 'WebhookConfigured'; data: z.infer<typeof webhookEventSchemas.WebhookConfigured> }
  | { type: 'WebhookDeliveryFailureCounted'; data: z.infer<typeof webhookEventSchemas.WebhookDeliveryFailureCounted> }
  | { type: 'WebhookFailuresReset'; data: z.infer<typeof webhookEventSchemas.WebhookFailuresReset> }
  | { type: 'WebhookDeactivated'; data: z.infer<typeof webhookEventSchemas.WebhookDeactivated> };

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** What an attempt led to: done, another attempt at `nextAttemptAt`, or the delivery failed. */
export const ATTEMPT_OUTCOMES = ['succeeded', 'retry', 'failed'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const CANCEL_REASONS = ['WEBHOOK_INACTIVE', 'WEBHOOK_NOT_CONFIGURED'] as const;

export const deliveryEventSchemas = {
  WebhookDeliveryScheduled: z.object({
    deliveryId: z.string(),
    sessionId: z.string(),
    webhookId: z.string(),
    eventType: z.enum(WEBHOOK_EVENT_TYPES),
    /** The session event delivered (its event id). */
    sourceEventId: z.string(),
    /** The `webhook-id` header: the same on every attempt and redelivery. */
    messageId: z.string(),
    /** The exact body sent (JSON text), so every attempt signs the same bytes. */
    body: z.string(),
    nextAttemptAt: z.string(),
    at: z.string(),
  }),
  WebhookDeliveryAttempted: z.object({
    /** 1-based, counted over the delivery's whole life (redeliveries continue the count). */
    attempt: z.number().int().positive(),
    statusCode: z.number().int().nullable(),
    /** Error code when no acceptable answer came (OUTBOUND_TIMEOUT, HTTP_503, …). */
    error: z.string().nullable(),
    durationMs: z.number().int().min(0),
    outcome: z.enum(ATTEMPT_OUTCOMES),
    nextAttemptAt: z.string().nullable(),
    at: z.string(),
  }),
  WebhookDeliveryCancelled: z.object({ reason: z.enum(CANCEL_REASONS), at: z.string() }),
  WebhookRedeliveryRequested: z.object({ requestedBy: z.string().nullable(), at: z.string() }),
};

export type DeliveryEvent =
  | { type: 'WebhookDeliveryScheduled'; data: z.infer<typeof deliveryEventSchemas.WebhookDeliveryScheduled> }
  | { type: 'WebhookDeliveryAttempted'; data: z.infer<typeof deliveryEventSchemas.WebhookDeliveryAttempted> }
  | { type: 'WebhookDeliveryCancelled'; data: z.infer<typeof deliveryEventSchemas.WebhookDeliveryCancelled> }
  | { type: 'WebhookRedeliveryRequested'; data: z.infer<typeof deliveryEventSchemas.WebhookRedeliveryRequested> };

export const WEBHOOK_CATEGORY = 'msgwebhook';
export const DELIVERY_CATEGORY = 'msgdelivery';
export const webhookStreamId = (sessionId: string) => `${WEBHOOK_CATEGORY}-${sessionId}`;
export const deliveryStreamId = (deliveryId: string) => `${DELIVERY_CATEGORY}-${deliveryId}`;
