import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Ack, ChatMessage, SessionStatus } from '../../domain/messaging/events.js';
import { SESSION_STATUSES } from '../../domain/messaging/events.js';
import type { InboundChange, ProviderInbound } from '../../ports/messaging-provider.js';
import { meOf, wahaId } from './waha-provider.js';

/** WAHA signs each event: `X-Webhook-Hmac` = hex HMAC-SHA512 of the raw body with the configured key. */
export function wahaSignatureOf(body: string, key: string): string {
  return createHmac('sha512', key).update(body).digest('hex');
}

export function verifyWahaSignature(body: string, key: string, header: string | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(wahaSignatureOf(body, key), 'utf8');
  const given = Buffer.from(header.trim().toLowerCase(), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const ACK_BY_NUMBER: Record<number, Ack> = { [-1]: 'ERROR', 0: 'PENDING', 1: 'SERVER', 2: 'DEVICE', 3: 'READ', 4: 'READ' };
const ACK_BY_NAME: Record<string, Ack> = { ERROR: 'ERROR', PENDING: 'PENDING', SERVER: 'SERVER', DEVICE: 'DEVICE', READ: 'READ', PLAYED: 'READ' };

/** WAHA's ack (number, or ackName) in our terms; PLAYED counts as READ. */
export function ackOf(payload: { ack?: unknown; ackName?: unknown }): Ack | null {
  if (typeof payload.ackName === 'string' && ACK_BY_NAME[payload.ackName]) return ACK_BY_NAME[payload.ackName];
  if (typeof payload.ack === 'number' && ACK_BY_NUMBER[payload.ack]) return ACK_BY_NUMBER[payload.ack];
  return null;
}

export function statusOf(value: unknown): SessionStatus | null {
  return (SESSION_STATUSES as readonly string[]).includes(String(value)) ? (value as SessionStatus) : null;
}

/** A WAHA `message` payload as our received message, or null when it is not one we record (our own, malformed). */
export function receivedMessageOf(payload: Record<string, unknown>, self: string | null, now: Date): ChatMessage | null {
  if (payload.fromMe === true) return null;
  const id = wahaId(payload.id);
  const from = typeof payload.from === 'string' ? payload.from : null;
  if (!id || !from) return null;
  const isGroup = from.endsWith('@g.us');
  const participant = typeof payload.participant === 'string' ? payload.participant : null;
  const ts = typeof payload.timestamp === 'number' ? new Date(payload.timestamp * 1000) : now;
  const replyTo = payload.replyTo && typeof payload.replyTo === 'object' ? wahaId((payload.replyTo as { id?: unknown }).id) : typeof payload.replyTo === 'string' ? payload.replyTo : null;
  return {
    id,
    chatId: from,
    from: isGroup && participant ? participant : from,
    to: typeof payload.to === 'string' ? payload.to : (self ?? ''),
    text: typeof payload.body === 'string' ? payload.body : '',
    timestamp: Number.isNaN(ts.getTime()) ? now.toISOString() : ts.toISOString(),
    fromMe: false,
    replyTo,
    groupId: isGroup ? from : null,
  };
}

/**
 * WAHA's inbound webhook behind the ProviderInbound port: `session.status` → a status change (with
 * who the session is paired as, when WAHA says so), `message` → a received message, `message.ack`
 * → an ack. Anything else is not ours to record.
 */
export function wahaInbound(hmacKey: string | undefined): ProviderInbound {
  return {
    verify: (rawBody, signature) => Boolean(hmacKey) && verifyWahaSignature(rawBody, hmacKey!, signature),
    translate(envelope, self, now): InboundChange | null {
      const { payload } = envelope;
      switch (envelope.event) {
        case 'session.status': {
          const status = statusOf(payload.status);
          if (!status) return null;
          const me = status === 'WORKING' ? (meOf(payload.me) ?? meOf(envelope.me)) : undefined;
          return me ? { type: 'status', status, me } : { type: 'status', status };
        }
        case 'message': {
          const message = receivedMessageOf(payload, self, now);
          return message ? { type: 'message', message } : null;
        }
        case 'message.ack': {
          const ack = ackOf(payload);
          const messageId = wahaId(payload.id);
          return ack && messageId ? { type: 'ack', messageId, ack } : null;
        }
        default:
          return null;
      }
    },
  };
}
