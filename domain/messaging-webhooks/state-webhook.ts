import type { DeactivationReason, WebhookEvent, WebhookEventName, WebhookEventType } from './events.js';

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

/** Whether a webhook configured as `state` wants events of `type`. */
export function wantsEvent(state: WebhookState, type: WebhookEventType): boolean {
  return state.configured && state.isActive && (state.events.includes('*') || state.events.includes(type));
}

/** Whether a delivery to this webhook can be attempted now (else it is cancelled with the reason). */
export function deliverableReason(state: WebhookState): 'WEBHOOK_INACTIVE' | 'WEBHOOK_NOT_CONFIGURED' | null {
  if (state.configured && state.isActive && state.url && state.secretSealed) return null;
  return state.configured ? 'WEBHOOK_INACTIVE' : 'WEBHOOK_NOT_CONFIGURED';
}
