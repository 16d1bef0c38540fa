import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { CommandContext } from '../../commands/handle.js';
import { executeDeliveryCommand, executeWebhookCommand, loadDelivery, loadWebhook } from '../../commands/messaging-webhooks.js';
import { DomainError } from '../../domain/shared/decider.js';
import { judgeAttempt, parseRetryAfter, type AttemptResult, type RetryPolicy } from '../../domain/messaging-webhooks/index.js';
import { OutboundError, outboundFetch } from '../http/outbound.js';
import type { Services } from '../ports/services.js';
import { signedHeaders } from './signing.js';

/** A receiver's answer body is not used; this much is read and the rest dropped. */
const MAX_ANSWER_BYTES = 16 * 1024;
/** An attempt whose time is this close is made now rather than re-armed. */
const EARLY_TOLERANCE_MS = 5;

export function retryPolicyOf(config: Services['config']): RetryPolicy {
  return {
    maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
    baseMs: config.WEBHOOK_RETRY_BASE_MS,
    factor: config.WEBHOOK_RETRY_FACTOR,
    maxMs: config.WEBHOOK_RETRY_MAX_MS,
    jitter: config.WEBHOOK_RETRY_JITTER,
    retryAfterMaxMs: config.WEBHOOK_RETRY_AFTER_MAX_MS,
  };
}

const workerContext = (services: Services): CommandContext => ({
  actorId: null,
  orgId: null,
  workspaceId: null,
  correlationId: randomUUID(),
  causationId: null,
  requestId: null,
  now: services.now(),
});

/** Another writer recorded this attempt first (a second worker after a sweep): nothing left to do. */
const lostRace = (err: unknown) => err instanceof DomainError && (err.kind === 'precondition_failed' || err.kind === 'conflict');

/**
 * One attempt of one delivery: re-read the delivery, check the webhook, send the signed body,
 * judge the answer (domain/webhooks/retry.ts) and record it at the revision it was judged on.
 * `reschedule` arms the next attempt in this process (the bus consumer arms it too; the scheduler
 * keeps one). An attempt cut short by shutdown records nothing: the delivery stays pending and due.
 */
export async function attemptDelivery(
  services: Services,
  deliveryId: string,
  signal: AbortSignal,
  reschedule: (deliveryId: string, dueAt: Date) => void,
): Promise<void> {
  const { config, eventStore, logger } = services;
  const { state, revision } = await loadDelivery(eventStore, deliveryId);
  if (!state.exists || state.status !== 'pending' || !state.sessionId || !state.body || !state.messageId) return;
  const due = state.nextAttemptAt ? Date.parse(state.nextAttemptAt) : 0;
  if (due - services.now().getTime() > EARLY_TOLERANCE_MS) {
    reschedule(deliveryId, new Date(due));
    return;
  }

  const hook = (await loadWebhook(eventStore, state.sessionId)).state;
  if (!hook.configured || !hook.isActive || !hook.url || !hook.secretSealed) {
    const reason = hook.configured ? 'WEBHOOK_INACTIVE' : 'WEBHOOK_NOT_CONFIGURED';
    await executeDeliveryCommand(eventStore, workerContext(services), deliveryId, { type: 'CancelDelivery', reason }, revision).catch((err) => {
      if (!lostRace(err)) throw err;
    });
    return;
  }

  const sentAt = services.now();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'flowsvc-webhooks/1',
    ...signedHeaders(services.sealedBox.open(hook.secretSealed), state.messageId, sentAt, state.body),
  };
  const started = performance.now();
  let result: AttemptResult;
  try {
    const answer = await outboundFetch(hook.url, {
      method: 'POST',
      headers,
      body: state.body,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      signal,
      allowPrivateNetwork: config.ALLOW_PRIVATE_NETWORK,
      // A redirect is an answer like any other non-2xx: following it would turn the POST into a GET.
      maxRedirects: 0,
      maxResponseBytes: MAX_ANSWER_BYTES,
      truncate: true,
    });
    result = { statusCode: answer.status, errorCode: null, retryAfterMs: parseRetryAfter(answer.headers['retry-after'], services.now()) };
  } catch (err) {
    if (signal.aborted) return;
    result = { statusCode: null, errorCode: err instanceof OutboundError ? err.code : 'OUTBOUND_NETWORK_ERROR', retryAfterMs: null };
  }
  const durationMs = Math.round(performance.now() - started);

  const verdict = judgeAttempt(result, state.attemptsInRound + 1, retryPolicyOf(config), Math.random());
  const context = workerContext(services);
  const nextAttemptAt = verdict.delayMs === null ? null : new Date(context.now.getTime() + verdict.delayMs);
  try {
    await executeDeliveryCommand(
      eventStore,
      context,
      deliveryId,
      { type: 'RecordAttempt', attempt: state.attempts + 1, statusCode: result.statusCode, error: verdict.error, durationMs, outcome: verdict.outcome, nextAttemptAt: nextAttemptAt?.toISOString() ?? null },
      revision,
    );
  } catch (err) {
    if (lostRace(err)) {
      logger.debug({ deliveryId }, 'webhook attempt recorded by another worker first');
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
    await executeWebhookCommand(eventStore, context, sessionId, { type: 'CountDeliveryFailure', deliveryId, threshold: config.WEBHOOK_FAILURE_THRESHOLD });
  } else if (verdict.outcome === 'succeeded' && hook.failingDeliveryIds.length > 0) {
    await executeWebhookCommand(eventStore, context, sessionId, { type: 'CountDeliverySuccess', deliveryId });
  }
}
