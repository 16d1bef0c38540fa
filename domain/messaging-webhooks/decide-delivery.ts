import { DomainError } from '../shared/decider.js';
import type { AttemptOutcome, DeliveryEvent, WebhookEventType } from './events.js';
import type { DeliveryState } from './state-delivery.js';
import type { WebhookState } from './state-webhook.js';

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
  /**
   * A person asks for a failed delivery again. It names the session it asks through (a delivery of
   * another session is not found), and carries the session webhook's state folded from its own
   * stream, since whether the webhook is active is a fact of the other aggregate.
   */
  | { type: 'RequestRedelivery'; sessionId: string; webhook: Pick<WebhookState, 'isActive' | 'deactivatedReason'>; requestedBy: string | null; at: string };

const notFound = () => new DomainError('DELIVERY_NOT_FOUND', 'webhook delivery not found', 'not_found');

export function decideDelivery(command: DeliveryCommand, state: DeliveryState): DeliveryEvent[] {
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
      if (!state.exists || state.sessionId !== command.sessionId) throw notFound();
      // Redelivering to an inactive webhook would only cancel again: say what to fix instead.
      if (state.status === 'failed' && !command.webhook.isActive) {
        throw new DomainError('WEBHOOK_INACTIVE', `the webhook is inactive (${command.webhook.deactivatedReason ?? 'not configured'}); configure it again before redelivering`, 'conflict');
      }
      if (state.status !== 'failed') throw new DomainError('DELIVERY_NOT_FAILED', `only a failed delivery can be redelivered; this one is ${state.status}`, 'conflict', { status: state.status });
      return [{ type: 'WebhookRedeliveryRequested', data: { requestedBy: command.requestedBy, at: command.at } }];
  }
}
