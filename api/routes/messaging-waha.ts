import { z } from 'zod';
import { recordInboundEvent } from '../../commands/messaging-inbound.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { RouteInput } from '../route.js';
import { defineRoute } from '../route.js';
import { parsePart } from '../validation.js';
import { tag } from './messaging-support.js';

/** The exact bytes WAHA signed, as the body parser kept them (`request.rawBody`); else the compact JSON WAHA sends, re-serialised. */
function rawBodyOf(input: RouteInput<unknown, unknown, unknown>): string {
  const body = input.koa.request.body as Record<PropertyKey, unknown> | undefined;
  const unparsed = input.koa.request.rawBody ?? body?.[Symbol.for('unparsedBody')];
  // Not the zod output: it reorders keys (schema keys first).
  return typeof unparsed === 'string' ? unparsed : JSON.stringify(body);
}

const eventBody = z.looseObject({
  event: z.string().min(1).max(100),
  session: z.string().min(1).max(100),
  payload: z.record(z.string(), z.unknown()),
  me: z.unknown().optional(),
});

/**
 * Inbound events from WAHA, authenticated by WAHA's HMAC (`X-Webhook-Hmac`, SHA-512 with
 * MESSAGING_WAHA_WEBHOOK_HMAC_KEY), recorded as `msgsession` events: `session.status` →
 * MessagingSessionStatusChanged (with the QR fetched while SCAN_QR_CODE), `message` →
 * MessageReceived, `message.ack` → MessageAckChanged. Other events and unknown sessions are
 * acknowledged and ignored, so WAHA does not retry them forever.
 */
export const messagingProviderRoutes = [
  defineRoute({
    method: 'POST',
    path: '/messaging/providers/waha/events',
    operationId: 'receiveWahaEvent',
    summary: 'inbound WAHA webhook events (message, message.ack, session.status), signed with X-Webhook-Hmac (HMAC-SHA512 of the body)',
    tag,
    auth: 'none',
    // No `body` here: the signature is checked before the input is judged, so an unsigned caller learns nothing.
    responses: {
      200: { description: 'accepted (`recorded`: whether it changed a session)', schema: z.object({ success: z.literal(true), recorded: z.boolean() }) },
      400: { description: 'VALIDATION_FAILED' },
      401: { description: 'MESSAGING_WEBHOOK_SIGNATURE_INVALID: missing or wrong X-Webhook-Hmac, or no key configured' },
    },
    async handler(input) {
      const { services, koa } = input;
      if (!services.messaging.inbound('waha').verify(rawBodyOf(input), koa.get('x-webhook-hmac') || undefined)) {
        throw new DomainError('MESSAGING_WEBHOOK_SIGNATURE_INVALID', 'the X-Webhook-Hmac signature is missing or does not match', 'unauthenticated');
      }
      const body = parsePart('body', eventBody, koa.request.body ?? {});
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(body.session)) return { status: 200, body: { success: true, recorded: false } };
      const { recorded } = await recordInboundEvent({ eventStore: services.eventStore, providers: services.messaging }, { ...input.command, actorId: null }, body.session, body);
      return { status: 200, body: { success: true, recorded } };
    },
  }),
];
