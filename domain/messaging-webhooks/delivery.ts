import { DomainError, type Decider } from '../shared/decider.js';
import { deliveryEventSchemas, type AttemptOutcome, type DeliveryEvent, type DeliveryStatus, type WebhookEventType } from './events.js';

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

export type DeliveryCommand =
  | {
      type: 'ScheduleDelivery';
      deliveryId: string;
      sessionId: string;
      webhookId: string;
      eventType: WebhookEventType;
      sourceEventId: string;
      messageId: string;
      body: string;
      at: string;
    }
  | {
      type: 'RecordAttempt';
      attempt: number;
      statusCode: number | null;
      error: string | null;
      durationMs: number;
      outcome: AttemptOutcome;
      nextAttemptAt: string | null;
      at: string;
    }
  | { type: 'CancelDelivery'; reason: 'WEBHOOK_INACTIVE' | 'WEBHOOK_NOT_CONFIGURED'; at: string }
  | { type: 'RequestRedelivery'; requestedBy: string | null; at: string };

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

const notFound = () => new DomainError('DELIVERY_NOT_FOUND', 'webhook delivery not found', 'not_found');

export const deliveryDecider: Decider<DeliveryCommand, DeliveryState, DeliveryEvent> = {
  initialState: initialDeliveryState,
  eventSchemas: deliveryEventSchemas,
  evolve: evolveDelivery,
  decide(command, state) {
    switch (command.type) {
      case 'ScheduleDelivery': {
        // Idempotent: the dispatcher sees a session event at least once and derives the same id.
        if (state.exists) return [];
        const { type: _type, at, ...data } = command;
        return [{ type: 'WebhookDeliveryScheduled', data: { ...data, nextAttemptAt: at, at } }];
      }
      case 'RecordAttempt': {
        if (!state.exists) throw notFound();
        if (state.status !== 'pending') throw new DomainError('DELIVERY_NOT_PENDING', `the delivery is ${state.status}`, 'conflict');
        if (command.attempt !== state.attempts + 1) throw new DomainError('ATTEMPT_OUT_OF_ORDER', `attempt ${command.attempt} follows attempt ${state.attempts}`, 'conflict');
        if ((command.outcome === 'retry') !== (command.nextAttemptAt !== null)) throw new DomainError('ATTEMPT_INCONSISTENT', 'a retry needs a next attempt time, and only a retry has one', 'invalid');
        const { type: _type, ...data } = command;
        return [{ type: 'WebhookDeliveryAttempted', data }];
      }
      case 'CancelDelivery':
        if (!state.exists) throw notFound();
        if (state.status !== 'pending') return [];
        return [{ type: 'WebhookDeliveryCancelled', data: { reason: command.reason, at: command.at } }];
      case 'RequestRedelivery':
        if (!state.exists) throw notFound();
        if (state.status !== 'failed') throw new DomainError('DELIVERY_NOT_FAILED', `only a failed delivery can be redelivered; this one is ${state.status}`, 'conflict', { status: state.status });
        return [{ type: 'WebhookRedeliveryRequested', data: { requestedBy: command.requestedBy, at: command.at } }];
    }
  },
};
