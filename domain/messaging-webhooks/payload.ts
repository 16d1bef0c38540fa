import type { WebhookEventType } from './events.js';

/** Session events (stream `msgsession-…`) that become webhook events, by their event type. */
export const SOURCE_EVENT_TYPES: Record<string, WebhookEventType> = {
  MessageReceived: 'message',
  MessageAckChanged: 'message_ack',
  MessagingSessionStatusChanged: 'session.status',
};

export function webhookEventTypeOf(sourceType: string): WebhookEventType | null {
  return SOURCE_EVENT_TYPES[sourceType] ?? null;
}

/** What a receiver gets: `{type, timestamp, session, data}`. */
export interface WebhookBody {
  type: WebhookEventType;
  /** Unix milliseconds of the session event. */
  timestamp: number;
  /** The session id. */
  session: string;
  data: Record<string, unknown>;
}

/**
 * The body of the webhook event for one session event: a `message` carries the message itself;
 * `message_ack` and `session.status` carry the event's fields without the session id and time,
 * which the envelope already has.
 */
export function webhookBodyOf(type: WebhookEventType, sessionId: string, sourceData: Record<string, unknown>, occurredAt: string): WebhookBody {
  const at = typeof sourceData.at === 'string' ? sourceData.at : occurredAt;
  const parsed = Date.parse(at);
  const timestamp = Number.isNaN(parsed) ? Date.parse(occurredAt) : parsed;
  const { sessionId: _s, at: _a, ...rest } = sourceData;
  const data = type === 'message' && rest.message && typeof rest.message === 'object' ? (rest.message as Record<string, unknown>) : rest;
  return { type, timestamp, session: sessionId, data };
}
