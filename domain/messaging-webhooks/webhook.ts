import { DomainError, type Decider } from '../shared/decider.js';
import { webhookEventSchemas, type DeactivationReason, type WebhookEvent, type WebhookEventName, type WebhookEventType } from './events.js';

/** A session's webhook: where its events go, with which secret, and whether it still receives them. */
export interface WebhookState {
  configured: boolean;
  sessionId: string | null;
  webhookId: string | null;
  url: string | null;
  events: WebhookEventName[];
  secretSealed: string | null;
  isActive: boolean;
  configuredAt: string | null;
  /** Deliveries that failed since the last success (their ids, so a repeated report counts once). */
  failingDeliveryIds: string[];
  deactivatedReason: DeactivationReason | null;
  updatedAt: string | null;
}

export type WebhookCommand =
  | { type: 'ConfigureWebhook'; sessionId: string; webhookId: string; url: string; events: WebhookEventName[]; secretSealed: string; at: string }
  /** A delivery failed for good; `threshold` consecutive ones deactivate the webhook. */
  | { type: 'CountDeliveryFailure'; deliveryId: string; threshold: number; at: string }
  | { type: 'CountDeliverySuccess'; deliveryId: string; at: string }
  | { type: 'DeactivateWebhook'; reason: DeactivationReason; deliveryId: string | null; statusCode: number | null; at: string };

export const initialWebhookState: WebhookState = {
  configured: false,
  sessionId: null,
  webhookId: null,
  url: null,
  events: [],
  secretSealed: null,
  isActive: false,
  configuredAt: null,
  failingDeliveryIds: [],
  deactivatedReason: null,
  updatedAt: null,
};

export function evolveWebhook(state: WebhookState, event: WebhookEvent): WebhookState {
  switch (event.type) {
    case 'WebhookConfigured':
      return {
        configured: true,
        sessionId: event.data.sessionId,
        webhookId: event.data.webhookId,
        url: event.data.url,
        events: event.data.events,
        secretSealed: event.data.secretSealed,
        isActive: true,
        configuredAt: event.data.at,
        failingDeliveryIds: [],
        deactivatedReason: null,
        updatedAt: event.data.at,
      };
    case 'WebhookDeliveryFailureCounted':
      return { ...state, failingDeliveryIds: [...state.failingDeliveryIds, event.data.deliveryId], updatedAt: event.data.at };
    case 'WebhookFailuresReset':
      return { ...state, failingDeliveryIds: [], updatedAt: event.data.at };
    case 'WebhookDeactivated':
      return { ...state, isActive: false, deactivatedReason: event.data.reason, updatedAt: event.data.at };
    default:
      return state;
  }
}

export const webhookDecider: Decider<WebhookCommand, WebhookState, WebhookEvent> = {
  initialState: initialWebhookState,
  eventSchemas: webhookEventSchemas,
  evolve: evolveWebhook,
  decide(command, state) {
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
  },
};

/** Whether a webhook configured as `state` wants events of `type`. */
export function wantsEvent(state: WebhookState, type: WebhookEventType): boolean {
  return state.configured && state.isActive && (state.events.includes('*') || state.events.includes(type));
}
