import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../commands/handle.js';
import { executeDeliveryCommand, executeWebhookCommand, loadDelivery, loadWebhook } from '../commands/messaging-webhooks.js';
import { deliverableReason, judgeAttempt, parseRetryAfter, type AttemptResult, type RetryPolicy } from '../domain/messaging-webhooks/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { WebhookSender } from '../ports/messaging-webhooks.js';

/** An attempt whose time is this close is made now rather than re-armed. */
const EARLY_TOLERANCE_MS = 5;

export interface AttemptPorts {
  eventStore: EventStore;
  clock: Clock;
  sender: WebhookSender;
  logger: Logger;
  policy: RetryPolicy;
  /** Consecutive failed deliveries that deactivate the webhook (WEBHOOK_FAILURE_THRESHOLD). */
  failureThreshold: number;
  /** In [0, 1): the retry jitter. */
  random: () => number;
}

const workerContext = (clock: Clock): CommandContext => ({
  actorId: null,
  orgId: null,
  workspaceId: null,
  correlationId: randomUUID(),
  causationId: null,
  requestId: null,
  now: clock.now(),
});

/** Another writer recorded this attempt first (a second worker after a sweep): nothing left to do. */
const lostRace = (err: unknown) => err instanceof DomainError && (err.kind === 'precondition_failed' || err.kind === 'conflict');

/**
 * One attempt of one delivery: re-read the delivery, check the webhook, send the signed body,
 * judge the answer (domain/messaging-webhooks/retry.ts) and record it at the revision it was
 * judged on. `reschedule` arms the next attempt in this process (the bus consumer arms it too;
 * the sweep keeps one). An attempt cut short by shutdown records nothing: the delivery stays
 * pending and due.
 */
export async function attemptDelivery(ports: AttemptPorts, deliveryId: string, signal: AbortSignal, reschedule: (deliveryId: string, dueAt: Date) => void): Promise<void> {
  const { eventStore, clock } = ports;
  const { state, revision } = await loadDelivery(eventStore, deliveryId);
  if (!state.exists || state.status !== 'pending' || !state.sessionId || !state.body || !state.messageId) return;
  const due = state.nextAttemptAt ? Date.parse(state.nextAttemptAt) : 0;
  if (due - clock.now().getTime() > EARLY_TOLERANCE_MS) {
    reschedule(deliveryId, new Date(due));
    return;
  }

  const hook = (await loadWebhook(eventStore, state.sessionId)).state;
  const cancelled = deliverableReason(hook);
  if (cancelled) {
    await executeDeliveryCommand(eventStore, workerContext(clock), deliveryId, { type: 'CancelDelivery', reason: cancelled }, revision).catch((err) => {
      if (!lostRace(err)) throw err;
    });
    return;
  }

  const sent = await ports.sender.send({ url: hook.url!, secretSealed: hook.secretSealed!, messageId: state.messageId, body: state.body, sentAt: clock.now(), signal });
  if (sent.kind === 'aborted') return;
  const result: AttemptResult =
    sent.kind === 'answered'
      ? { statusCode: sent.statusCode, errorCode: null, retryAfterMs: parseRetryAfter(sent.retryAfter, clock.now()) }
      : { statusCode: null, errorCode: sent.errorCode, retryAfterMs: null };

  const verdict = judgeAttempt(result, state.attemptsInRound + 1, ports.policy, ports.random());
  const context = workerContext(clock);
  const nextAttemptAt = verdict.delayMs === null ? null : new Date(context.now.getTime() + verdict.delayMs);
  try {
    await executeDeliveryCommand(
      eventStore,
      context,
      deliveryId,
      { type: 'RecordAttempt', attempt: state.attempts + 1, statusCode: result.statusCode, error: verdict.error, durationMs: sent.durationMs, outcome: verdict.outcome, nextAttemptAt: nextAttemptAt?.toISOString() ?? null },
      revision,
    );
  } catch (err) {
    if (lostRace(err)) {
      ports.logger.debug({ deliveryId }, 'webhook attempt recorded by another worker first');
      return;
    }
    throw err;
  }
  if (nextAttemptAt) reschedule(deliveryId, nextAttemptAt);

  // The webhook's health: a 410 deactivates it; a failed delivery counts towards the threshold.
  const sessionId = state.sessionId;
  if (verdict.gone) {
    await executeWebhookCommand(eventStore, context, sessionId, { type: 'DeactivateWebhook', reason: 'GONE', deliveryId, statusCode: result.statusCode });
  } else if (verdict.outcome === 'failed') {
    await executeWebhookCommand(eventStore, context, sessionId, { type: 'CountDeliveryFailure', deliveryId, threshold: ports.failureThreshold });
  } else if (verdict.outcome === 'succeeded' && hook.failingDeliveryIds.length > 0) {
    await executeWebhookCommand(eventStore, context, sessionId, { type: 'CountDeliverySuccess', deliveryId });
  }
}
