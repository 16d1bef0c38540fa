import { DomainError } from '../shared/decider.js';
import type { DeactivationReason, WebhookEvent, WebhookEventName } from './events.js';
import type { WebhookState } from './state-webhook.js';

export type WebhookCommand =
  | { type: 'ConfigureWebhook'; sessionId: string; webhookId: string; url: string; events: WebhookEventName[]; secretSealed: string; at: string }
  /** A delivery failed for good; `threshold` consecutive ones deactivate the webhook. */
  | { type: 'CountDeliveryFailure'; deliveryId: string; threshold: number; at: string }
  | { type: 'CountDeliverySuccess'; deliveryId: string; at: string }
  | { type: 'DeactivateWebhook'; reason: DeactivationReason; deliveryId: string | null; statusCode: number | null; at: string };

export function decideWebhook(command: WebhookCommand, state: WebhookState): WebhookEvent[] {
  switch (command.type) {
    case 'ConfigureWebhook': {
      if (command.events.length === 0) throw new DomainError('WEBHOOK_EVENTS_REQUIRED', 'name at least one event', 'invalid', { field: 'body.events' });
      const events = [...new Set(command.events)];
      const { sessionId, webhookId, url, secretSealed, at } = command;
      return [{ type: 'WebhookConfigured', data: { sessionId, webhookId, url, events, secretSealed, at } }];
    }
    case 'CountDeliveryFailure': {
      if (!state.configured || !state.isActive || state.failingDeliveryIds.includes(command.deliveryId)) return [];
      const consecutiveFailures = state.failingDeliveryIds.length + 1;
      const counted: WebhookEvent = { type: 'WebhookDeliveryFailureCounted', data: { deliveryId: command.deliveryId, consecutiveFailures, at: command.at } };
      if (consecutiveFailures < command.threshold) return [counted];
      return [counted, { type: 'WebhookDeactivated', data: { reason: 'TOO_MANY_FAILURES', deliveryId: command.deliveryId, statusCode: null, at: command.at } }];
    }
    case 'CountDeliverySuccess':
      if (!state.configured || state.failingDeliveryIds.length === 0) return [];
      return [{ type: 'WebhookFailuresReset', data: { deliveryId: command.deliveryId, at: command.at } }];
    case 'DeactivateWebhook':
      if (!state.configured || !state.isActive) return [];
      return [{ type: 'WebhookDeactivated', data: { reason: command.reason, deliveryId: command.deliveryId, statusCode: command.statusCode, at: command.at } }];
  }
}
