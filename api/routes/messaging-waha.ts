import { z } from 'zod';
import { executeSessionCommand, loadSession, providerRefOf } from '../../commands/messaging.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { SessionStatus } from '../../domain/messaging/index.js';
import { ackOf, receivedMessageOf, statusOf, verifyWahaSignature } from '../../infra/messaging/waha-inbound.js';
import { wahaId } from '../../infra/messaging/waha-provider.js';
import { ProviderError } from '../../infra/ports/messaging-provider.js';
import type { RouteInput } from '../route.js';
import { defineRoute } from '../route.js';
import { parsePart } from '../validation.js';
import { tag } from './messaging-support.js';

/** The exact bytes WAHA signed: koa-body keeps them (`request.rawBody`) when `includeUnparsed` is on; else the compact JSON WAHA sends, re-serialised. */
function rawBodyOf(input: RouteInput<unknown, unknown, unknown>): string {
  const body = input.koa.request.body as Record<PropertyKey, unknown> | undefined;
  const unparsed = (input.koa.request as { rawBody?: unknown }).rawBody ?? body?.[Symbol.for('unparsedBody')];
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
      const key = services.config.MESSAGING_WAHA_WEBHOOK_HMAC_KEY;
      if (!key || !verifyWahaSignature(rawBodyOf(input), key, koa.get('x-webhook-hmac') || undefined)) {
        throw new DomainError('MESSAGING_WEBHOOK_SIGNATURE_INVALID', 'the X-Webhook-Hmac signature is missing or does not match', 'unauthenticated');
      }
      const body = parsePart('body', eventBody, koa.request.body ?? {});
      const sessionId = body.session;
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(sessionId)) return { status: 200, body: { success: true, recorded: false } };
      const { state } = await loadSession(services.eventStore, sessionId);
      if (!state.exists || state.deleted || state.provider !== 'waha') return { status: 200, body: { success: true, recorded: false } };
      const context = { ...input.command, actorId: null };
      const payload = body.payload;
      let position: number | null = null;
      switch (body.event) {
        case 'session.status': {
          const status = statusOf(payload.status);
          if (!status) break;
          const provider = services.messaging.provider('waha');
          let qr: string | undefined;
          let me: { id: string; pushName?: string } | undefined;
          try {
            if (status === 'SCAN_QR_CODE') qr = (await provider.qr(providerRefOf(state))) ?? undefined;
            if (status === 'WORKING') me = meOf(payload.me) ?? meOf(body.me) ?? (await provider.me(providerRefOf(state))) ?? undefined;
          } catch (err) {
            if (!(err instanceof ProviderError)) throw err;
          }
          const result = await executeSessionCommand(services.eventStore, context, sessionId, {
            type: 'ChangeStatus',
            status,
            // Webhooks arrive late and out of order with our own polling: a late STARTING or QR
            // must not undo a later state (a real restart passes through STOPPED or FAILED first).
            ...(LATE_STATUS_GUARD[status] ? { onlyFrom: LATE_STATUS_GUARD[status] } : {}),
            ...(qr ? { qr } : {}),
            ...(me ? { me } : {}),
            ...(status === 'FAILED' ? { reason: 'reported by WAHA' } : {}),
          });
          position = result.position;
          break;
        }
        case 'message': {
          const message = receivedMessageOf(payload, state.me?.id ?? null, input.command.now);
          if (!message) break;
          position = (await executeSessionCommand(services.eventStore, context, sessionId, { type: 'RecordReceived', message })).position;
          break;
        }
        case 'message.ack': {
          const ack = ackOf(payload);
          const messageId = wahaId(payload.id);
          if (!ack || !messageId) break;
          position = (await executeSessionCommand(services.eventStore, context, sessionId, { type: 'ChangeAck', messageId, ack })).position;
          break;
        }
        default:
          break;
      }
      return { status: 200, body: { success: true, recorded: position !== null } };
    },
  }),
];

const LATE_STATUS_GUARD: Partial<Record<SessionStatus, SessionStatus[]>> = {
  STARTING: ['STOPPED', 'FAILED', 'STARTING'],
  SCAN_QR_CODE: ['STOPPED', 'FAILED', 'STARTING', 'SCAN_QR_CODE'],
};

function meOf(value: unknown): { id: string; pushName?: string } | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const id = wahaId((value as { id?: unknown }).id);
  if (!id) return undefined;
  const pushName = (value as { pushName?: unknown }).pushName;
  return typeof pushName === 'string' ? { id, pushName } : { id };
}
