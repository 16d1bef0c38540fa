import type { DeliveryEvent, DeliveryStatus, WebhookEventType } from './events.js';

/** One delivery of one session event to the session's webhook. */
export interface DeliveryState {
  exists: boolean;
  deliveryId: string | null;
  sessionId: string | null;
  webhookId: string | null;
  eventType: WebhookEventType | null;
  messageId: string | null;
  body: string | null;
  status: DeliveryStatus;
  /** Attempts over the delivery's life. */
  attempts: number;
  /** Attempts since it was scheduled or last redelivered: what the retry schedule counts. */
  attemptsInRound: number;
  nextAttemptAt: string | null;
  createdAt: string | null;
}

export const initialDeliveryState: DeliveryState = {
  exists: false,
  deliveryId: null,
  sessionId: null,
  webhookId: null,
  eventType: null,
  messageId: null,
  body: null,
  status: 'pending',
  attempts: 0,
  attemptsInRound: 0,
  nextAttemptAt: null,
  createdAt: null,
};

export function evolveDelivery(state: DeliveryState, event: DeliveryEvent): DeliveryState {
  switch (event.type) {
    case 'WebhookDeliveryScheduled': {
      const d = event.data;
      return {
        exists: true,
        deliveryId: d.deliveryId,
        sessionId: d.sessionId,
        webhookId: d.webhookId,
        eventType: d.eventType,
        messageId: d.messageId,
        body: d.body,
        status: 'pending',
        attempts: 0,
        attemptsInRound: 0,
        nextAttemptAt: d.nextAttemptAt,
        createdAt: d.at,
      };
    }
    case 'WebhookDeliveryAttempted': {
      const status: DeliveryStatus = event.data.outcome === 'retry' ? 'pending' : event.data.outcome;
      return { ...state, status, attempts: event.data.attempt, attemptsInRound: state.attemptsInRound + 1, nextAttemptAt: event.data.nextAttemptAt };
    }
    case 'WebhookDeliveryCancelled':
      return { ...state, status: 'failed', nextAttemptAt: null };
    case 'WebhookRedeliveryRequested':
      return { ...state, status: 'pending', attemptsInRound: 0, nextAttemptAt: event.data.at };
    default:
      return state;
  }
}
