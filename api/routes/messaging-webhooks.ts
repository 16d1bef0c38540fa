import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { configureWebhook, requestRedelivery } from '../../commands/messaging-webhooks.js';
import { sessionNotFound } from '../../domain/messaging/index.js';
import { DELIVERY_STATUSES, deliveryStreamId, webhookEventNameSchema, webhookStreamId, WEBHOOK_EVENT_NAMES } from '../../domain/messaging-webhooks/index.js';
import type { Principal } from '../../domain/shared/principal.js';
import type { Services } from '../../ports/services.js';
import { findMessagingSession } from '../../projections/messaging.js';
import { deliveryDocOf, getWebhook, listDeliveries, type DeliveryDoc, type WebhookDoc } from '../../projections/messaging-webhooks.js';
import { NotFoundError } from '../errors.js';
import { defineRoute } from '../route.js';
import { sessionIdSchema } from './messaging-support.js';
import { pageQuery, pageReply } from './pagination.js';

const TAG = 'Messaging sessions';
export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MAX_WEBHOOK_SECRET_LENGTH = 256;

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
};

const sessionParams = z.strictObject({ sessionId: sessionIdSchema });
const deliveryParams = sessionParams.extend({ deliveryId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });

const webhookBody = z.strictObject({
  url: z.string().max(MAX_WEBHOOK_URL_LENGTH).refine(isHttpUrl, 'must be an absolute http(s) URL'),
  events: z.array(webhookEventNameSchema, { error: `each event must be one of ${WEBHOOK_EVENT_NAMES.join(', ')}` }).min(1).max(WEBHOOK_EVENT_NAMES.length * 2),
  secret: z.string().max(MAX_WEBHOOK_SECRET_LENGTH).refine((s) => s.trim().length > 0, 'must not be empty'),
});

const webhookSchema = z.object({ url: z.string(), events: z.array(z.string()), isActive: z.boolean() });
const webhookDetailSchema = webhookSchema.extend({
  deactivatedReason: z.string().nullable(),
  consecutiveFailures: z.number(),
  configuredAt: z.string(),
  updatedAt: z.string(),
});
const attemptSchema = z.object({ attempt: z.number(), statusCode: z.number().nullable(), error: z.string().nullable(), durationMs: z.number(), outcome: z.string(), at: z.string() });
const deliverySchema = z.object({
  id: z.string(),
  webhookId: z.string(),
  event: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.array(attemptSchema),
  attemptCount: z.number(),
  nextAttemptAt: z.string().nullable(),
  cancelReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const deliveryView = (d: DeliveryDoc) => ({
  id: d._id,
  webhookId: d.messageId,
  event: d.eventType,
  status: d.status,
  attempts: d.attempts,
  attemptCount: d.attemptCount,
  nextAttemptAt: d.nextAttemptAt,
  cancelReason: d.cancelReason,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});
const webhookDetailView = (w: WebhookDoc) => ({
  url: w.url,
  events: w.events,
  isActive: w.isActive,
  deactivatedReason: w.deactivatedReason,
  consecutiveFailures: w.consecutiveFailures,
  configuredAt: w.configuredAt,
  updatedAt: w.updatedAt,
});

/** The caller's session, or 404 for a missing, deleted or foreign one (never 403). */
async function ownSession(services: Services, principal: Principal | null, sessionId: string) {
  const session = await findMessagingSession(services.readStore, sessionId, flowScopeOf(principal!));
  if (!session) throw sessionNotFound();
  return session;
}

/** The session's webhook (seed contract), its delivery log and redelivery. */
export const webhooksRoutes = [
  defineRoute({
    method: 'POST',
    path: '/messaging/sessions/{sessionId}/webhook',
    operationId: 'configureMessagingWebhook',
    summary: 'configure the session webhook: events are signed (Standard Webhooks) with the secret and retried',
    tag: TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    params: sessionParams,
    body: webhookBody,
    responses: {
      200: { description: 'configured (and active)', schema: z.object({ success: z.literal(true), webhook: webhookSchema }) },
      400: { description: 'not an http(s) URL, an unknown event name, or an empty secret' },
      401: { description: 'no valid credentials' },
      404: { description: "MESSAGING_SESSION_NOT_FOUND: no such session, or another tenant's" },
    },
    seedStatuses: [200, 401, 404],
    async handler({ principal, params, body, services, command, settle }) {
      await ownSession(services, principal, params.sessionId);
      const result = await configureWebhook({ eventStore: services.eventStore, sender: services.webhooks }, command, {
        sessionId: params.sessionId,
        webhookId: services.newId(),
        url: body.url,
        events: body.events,
        secretSealed: services.sealedBox.seal(body.secret),
      });
      await settle(result.position, webhookStreamId(params.sessionId));
      const { url, events, isActive } = result.state;
      return { status: 200, body: { success: true, webhook: { url, events, isActive } } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/messaging/sessions/{sessionId}/webhook',
    operationId: 'getMessagingWebhook',
    summary: 'the session webhook: URL, events, whether it is active and why not (the secret is never returned)',
    tag: TAG,
    auth: 'bearer',
    permission: 'view_resources',
    params: sessionParams,
    responses: {
      200: { description: 'the webhook', schema: z.object({ success: z.literal(true), webhook: webhookDetailSchema }) },
      404: { description: 'no such session, or no webhook configured' },
    },
    async handler({ principal, params, services }) {
      await ownSession(services, principal, params.sessionId);
      const webhook = await getWebhook(services.readStore, params.sessionId);
      if (!webhook) throw new NotFoundError('webhook', 'WEBHOOK_NOT_CONFIGURED');
      return { status: 200, body: { success: true, webhook: webhookDetailView(webhook) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/messaging/sessions/{sessionId}/webhook/deliveries',
    operationId: 'listMessagingWebhookDeliveries',
    summary: 'the delivery log of the session webhook, newest first: status, every attempt, next attempt',
    tag: TAG,
    auth: 'bearer',
    permission: 'view_resources',
    params: sessionParams,
    query: pageQuery.extend({ status: z.enum(DELIVERY_STATUSES).optional() }),
    responses: {
      200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(deliverySchema), nextCursor: z.string().nullable() }) },
      404: { description: 'no such session (or not yours)' },
    },
    async handler({ principal, params, query, services }) {
      await ownSession(services, principal, params.sessionId);
      return pageReply(await listDeliveries(services.readStore, params.sessionId, query.status, query.limit, query.cursor ?? null), deliveryView);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/messaging/sessions/{sessionId}/webhook/deliveries/{deliveryId}/redeliver',
    operationId: 'redeliverMessagingWebhookDelivery',
    summary: 'send a failed delivery again (same webhook-id, a new round of attempts)',
    tag: TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    params: deliveryParams,
    responses: {
      202: { description: 'pending again; attempts follow', schema: z.object({ success: z.literal(true), delivery: deliverySchema }) },
      404: { description: 'no such session or delivery' },
      409: { description: 'DELIVERY_NOT_FAILED (only a failed delivery is redelivered) or WEBHOOK_INACTIVE (configure the webhook again first)' },
    },
    async handler({ principal, params, services, command, settle }) {
      await ownSession(services, principal, params.sessionId);
      const result = await requestRedelivery(services.eventStore, command, { sessionId: params.sessionId, deliveryId: params.deliveryId, requestedBy: principal!.userId });
      await settle(result.position, deliveryStreamId(params.deliveryId));
      // The delivery as this request left it, from its own stream: the read model may already show the next attempt.
      const events = await services.eventStore.readStream(deliveryStreamId(params.deliveryId), { maxCount: result.revision + 1 });
      const delivery = deliveryDocOf(params.deliveryId, events);
      if (!delivery) throw new NotFoundError('webhook delivery', 'DELIVERY_NOT_FOUND');
      return { status: 202, body: { success: true, delivery: deliveryView(delivery) } };
    },
  }),
];
