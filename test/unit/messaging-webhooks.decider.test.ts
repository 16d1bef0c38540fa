import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import {
  backoffDelayMs,
  deliverableReason,
  deliveryDecider,
  judgeAttempt,
  parseRetryAfter,
  webhookBodyOf,
  webhookDecider,
  wantsEvent,
  type DeliveryCommand,
  type DeliveryEvent,
  type RetryPolicy,
  type WebhookEvent,
} from '../../domain/messaging-webhooks/index.js';
import { signedHeaders, signingKeyOf } from '../../infra/messaging-webhooks/signing.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const hook = deciderSpec(webhookDecider);
const delivery = deciderSpec(deliveryDecider);
const configured: WebhookEvent = { type: 'WebhookConfigured', data: { sessionId: 's1', webhookId: 'w1', url: 'https://example.com/h', events: ['message'], secretSealed: 'v1.x', at } };
const scheduled: DeliveryEvent = {
  type: 'WebhookDeliveryScheduled',
  data: { deliveryId: 'd1', sessionId: 's1', webhookId: 'w1', eventType: 'message', sourceEventId: 'e1', messageId: 'msg_d1', body: '{}', nextAttemptAt: at, at },
};
const attempted = (attempt: number, outcome: 'succeeded' | 'retry' | 'failed'): DeliveryEvent => ({
  type: 'WebhookDeliveryAttempted',
  data: { attempt, statusCode: outcome === 'succeeded' ? 200 : 500, error: outcome === 'succeeded' ? null : 'HTTP_500', durationMs: 3, outcome, nextAttemptAt: outcome === 'retry' ? at : null, at },
});
const policy: RetryPolicy = { maxAttempts: 4, baseMs: 1000, factor: 2, maxMs: 10_000, jitter: 0.2, retryAfterMaxMs: 60_000 };
const activeHook = { isActive: true, deactivatedReason: null };
const redeliver = (webhook: Extract<DeliveryCommand, { type: 'RequestRedelivery' }>['webhook'] = activeHook, sessionId = 's1'): DeliveryCommand => ({ type: 'RequestRedelivery', sessionId, webhook, requestedBy: 'u1', at });

describe('webhook decider', () => {
  it('configures, dedupes event names, and wants only what it names (or everything with *)', () => {
    hook.given([]).when({ type: 'ConfigureWebhook', sessionId: 's1', webhookId: 'w1', url: 'https://example.com/h', events: ['message', 'message'], secretSealed: 'v1.x', at }).then([configured]);
    hook.given([]).when({ type: 'ConfigureWebhook', sessionId: 's1', webhookId: 'w1', url: 'https://example.com/h', events: [], secretSealed: 'v1.x', at }).thenThrows('WEBHOOK_EVENTS_REQUIRED', 'invalid');
    const state = hook.stateOf([configured]);
    expect(wantsEvent(state, 'message')).to.equal(true);
    expect(wantsEvent(state, 'message_ack')).to.equal(false);
    const all = hook.stateOf([{ ...configured, data: { ...configured.data, events: ['*'] } } as WebhookEvent]);
    expect(wantsEvent(all, 'session.status')).to.equal(true);
  });

  it('counts consecutive failed deliveries once each and deactivates at the threshold; a success resets', () => {
    const first = hook.given([configured]).when({ type: 'CountDeliveryFailure', deliveryId: 'd1', threshold: 2, at }).events();
    expect(first.map((e) => e.type)).to.deep.equal(['WebhookDeliveryFailureCounted']);
    hook.given([configured, ...first]).when({ type: 'CountDeliveryFailure', deliveryId: 'd1', threshold: 2, at }).then([]);
    const second = hook.given([configured, ...first]).when({ type: 'CountDeliveryFailure', deliveryId: 'd2', threshold: 2, at }).events();
    expect(second.map((e) => e.type)).to.deep.equal(['WebhookDeliveryFailureCounted', 'WebhookDeactivated']);
    expect((second[1].data as { reason: string }).reason).to.equal('TOO_MANY_FAILURES');
    expect(hook.given([configured, ...first]).when({ type: 'CountDeliverySuccess', deliveryId: 'd3', at }).events().map((e) => e.type)).to.deep.equal(['WebhookFailuresReset']);
    hook.given([configured]).when({ type: 'CountDeliverySuccess', deliveryId: 'd3', at }).then([]);
    // Configuring again reactivates with a clean count.
    const reconfigured = hook.stateOf([configured, ...first, ...second, configured]);
    expect(reconfigured).to.include({ isActive: true, deactivatedReason: null });
    expect(reconfigured.failingDeliveryIds).to.deep.equal([]);
  });

  it('deactivates once (410, deleted session); nothing to do without a webhook', () => {
    const gone = hook.given([configured]).when({ type: 'DeactivateWebhook', reason: 'GONE', deliveryId: 'd1', statusCode: 410, at }).then([
      { type: 'WebhookDeactivated', data: { reason: 'GONE', deliveryId: 'd1', statusCode: 410, at } },
    ]);
    expect(gone).to.have.length(1);
    hook.given([configured, ...gone]).when({ type: 'DeactivateWebhook', reason: 'SESSION_DELETED', deliveryId: null, statusCode: null, at }).then([]);
    hook.given([]).when({ type: 'DeactivateWebhook', reason: 'SESSION_DELETED', deliveryId: null, statusCode: null, at }).then([]);
    // What an attempt finds: nothing configured, deactivated, or ready to be sent to.
    expect(deliverableReason(hook.stateOf([]))).to.equal('WEBHOOK_NOT_CONFIGURED');
    expect(deliverableReason(hook.stateOf([configured, ...gone]))).to.equal('WEBHOOK_INACTIVE');
    expect(deliverableReason(hook.stateOf([configured]))).to.equal(null);
  });
});

describe('delivery decider', () => {
  const record = (attempt: number, outcome: 'succeeded' | 'retry' | 'failed'): DeliveryCommand => ({
    type: 'RecordAttempt',
    attempt,
    statusCode: 500,
    error: 'HTTP_500',
    durationMs: 1,
    outcome,
    nextAttemptAt: outcome === 'retry' ? at : null,
    at,
  });

  it('schedules once per id', () => {
    const command: DeliveryCommand = { type: 'ScheduleDelivery', deliveryId: 'd1', sessionId: 's1', webhookId: 'w1', eventType: 'message', sourceEventId: 'e1', messageId: 'msg_d1', body: '{}', at };
    delivery.given([]).when(command).then([scheduled]);
    delivery.given([scheduled]).when(command).then([]);
  });

  it('records attempts in order while pending, and refuses them after the end', () => {
    expect(delivery.given([scheduled]).when(record(1, 'retry')).events()).to.have.length(1);
    delivery.given([scheduled]).when(record(2, 'retry')).thenThrows('ATTEMPT_OUT_OF_ORDER', 'conflict');
    delivery.given([scheduled, attempted(1, 'succeeded')]).when(record(2, 'retry')).thenThrows('DELIVERY_NOT_PENDING', 'conflict');
    delivery.given([scheduled]).when({ ...(record(1, 'failed') as Extract<DeliveryCommand, { type: 'RecordAttempt' }>), nextAttemptAt: at }).thenThrows('ATTEMPT_INCONSISTENT', 'invalid');
    delivery.given([]).when(record(1, 'retry')).thenThrows('DELIVERY_NOT_FOUND', 'not_found');
  });

  it('redelivers only a failed delivery, starting a new round that continues the attempt count', () => {
    delivery.given([scheduled]).when(redeliver()).thenThrows('DELIVERY_NOT_FAILED', 'conflict');
    delivery.given([scheduled, attempted(1, 'succeeded')]).when(redeliver()).thenThrows('DELIVERY_NOT_FAILED', 'conflict');
    const failed = [scheduled, attempted(1, 'retry'), attempted(2, 'failed')];
    const events = delivery.given(failed).when(redeliver()).then([{ type: 'WebhookRedeliveryRequested', data: { requestedBy: 'u1', at } }]);
    const state = delivery.stateOf([...failed, ...events]);
    expect(state).to.include({ status: 'pending', attempts: 2, attemptsInRound: 0, nextAttemptAt: at });
    expect(delivery.given([...failed, ...events]).when(record(3, 'succeeded')).events()).to.have.length(1);
  });

  it("redelivers only through the delivery's own session, and not to an inactive webhook", () => {
    const failed = [scheduled, attempted(1, 'failed')];
    delivery.given([]).when(redeliver()).thenThrows('DELIVERY_NOT_FOUND', 'not_found');
    delivery.given(failed).when(redeliver(activeHook, 's2')).thenThrows('DELIVERY_NOT_FOUND', 'not_found');
    const gone = delivery.given(failed).when(redeliver({ isActive: false, deactivatedReason: 'GONE' })).thenThrows('WEBHOOK_INACTIVE', 'conflict');
    expect(gone.message).to.equal('the webhook is inactive (GONE); configure it again before redelivering');
    const never = delivery.given(failed).when(redeliver({ isActive: false, deactivatedReason: null })).thenThrows('WEBHOOK_INACTIVE', 'conflict');
    expect(never.message).to.contain('(not configured)');
    // A delivery that has not failed says so first, whatever the webhook's state.
    delivery.given([scheduled]).when(redeliver({ isActive: false, deactivatedReason: 'GONE' })).thenThrows('DELIVERY_NOT_FAILED', 'conflict');
  });

  it('cancels a pending delivery (webhook inactive) as failed', () => {
    const events = delivery.given([scheduled]).when({ type: 'CancelDelivery', reason: 'WEBHOOK_INACTIVE', at }).then([{ type: 'WebhookDeliveryCancelled', data: { reason: 'WEBHOOK_INACTIVE', at } }]);
    expect(delivery.stateOf([scheduled, ...events]).status).to.equal('failed');
    delivery.given([scheduled, attempted(1, 'succeeded')]).when({ type: 'CancelDelivery', reason: 'WEBHOOK_INACTIVE', at }).then([]);
  });
});

describe('webhook retry policy', () => {
  const result = (statusCode: number | null, errorCode: string | null = null, retryAfterMs: number | null = null) => ({ statusCode, errorCode, retryAfterMs });

  it('backs off exponentially, capped, within the jitter', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(policy, n, 0.5))).to.deep.equal([1000, 2000, 4000, 8000, 10_000]);
    expect(backoffDelayMs(policy, 1, 0)).to.equal(800);
    expect(backoffDelayMs(policy, 1, 0.999999)).to.equal(1200);
    expect(backoffDelayMs(policy, 10, 0.999999)).to.equal(10_000);
  });

  it('succeeds only on 2xx; retries timeouts, network errors, 408, 429 and 5xx; 410 is gone; other answers fail at once', () => {
    expect(judgeAttempt(result(204), 1, policy, 0.5)).to.deep.equal({ outcome: 'succeeded', error: null, delayMs: null, gone: false });
    for (const r of [result(null, 'OUTBOUND_TIMEOUT'), result(null, 'OUTBOUND_NETWORK_ERROR'), result(null, 'OUTBOUND_DNS_FAILED'), result(500), result(503), result(408), result(429)]) {
      expect(judgeAttempt(r, 1, policy, 0.5), JSON.stringify(r)).to.include({ outcome: 'retry', delayMs: 1000 });
    }
    expect(judgeAttempt(result(410), 1, policy, 0.5)).to.deep.equal({ outcome: 'failed', error: 'HTTP_410', delayMs: null, gone: true });
    for (const r of [result(400), result(401), result(404), result(301), result(null, 'OUTBOUND_ADDRESS_REFUSED')]) {
      expect(judgeAttempt(r, 1, policy, 0.5).outcome, JSON.stringify(r)).to.equal('failed');
    }
    expect(judgeAttempt(result(500), 4, policy, 0.5)).to.include({ outcome: 'failed', error: 'HTTP_500' });
  });

  it('honours Retry-After on 429 and 503 (capped), as seconds or a date', () => {
    expect(judgeAttempt(result(429, null, 7000), 1, policy, 0.5).delayMs).to.equal(7000);
    expect(judgeAttempt(result(503, null, 10 ** 9), 1, policy, 0.5).delayMs).to.equal(60_000);
    expect(judgeAttempt(result(500, null, 7000), 1, policy, 0.5).delayMs).to.equal(1000);
    const now = new Date('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).to.equal(3000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).to.equal(10_000);
    expect(parseRetryAfter('soon', now)).to.equal(null);
    expect(parseRetryAfter(undefined, now)).to.equal(null);
  });
});

describe('webhook body and signing', () => {
  it('builds {type, timestamp, session, data}: the message itself, or the event fields without the envelope ones', () => {
    const message = { id: 'm1', chatId: 'c', from: 'a', to: 'b', text: 'hi', timestamp: at, fromMe: false };
    expect(webhookBodyOf('message', 's1', { sessionId: 's1', message, at }, at)).to.deep.equal({ type: 'message', timestamp: Date.parse(at), session: 's1', data: message });
    expect(webhookBodyOf('message_ack', 's1', { sessionId: 's1', messageId: 'm1', chatId: 'c', ack: 'READ', previous: 'SERVER', at }, at).data).to.deep.equal({ messageId: 'm1', chatId: 'c', ack: 'READ', previous: 'SERVER' });
  });

  it('signs so that the standardwebhooks library verifies: plain secrets as UTF-8 bytes (raw), whsec_ secrets base64-decoded', () => {
    const body = JSON.stringify({ type: 'message', text: 'héllo' });
    for (const secret of ['s3cret', 'pässwörd ✓ with spaces']) {
      const headers = signedHeaders(secret, 'msg_1', new Date(), body);
      expect(new Webhook(new TextEncoder().encode(secret), { format: 'raw' }).verify(body, headers)).to.deep.equal(JSON.parse(body));
    }
    // An ASCII secret is the same key either way the library takes it raw.
    expect(new Webhook('s3cret', { format: 'raw' }).verify(body, signedHeaders('s3cret', 'msg_1', new Date(), body))).to.be.an('object');
    const whsec = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    expect(new Webhook(whsec).verify(body, signedHeaders(whsec, 'msg_2', new Date(), body))).to.be.an('object');
    expect(signingKeyOf('whsec_not base64!').toString('utf8')).to.equal('whsec_not base64!');
    expect(() => new Webhook('other', { format: 'raw' }).verify(body, signedHeaders('s3cret', 'msg_1', new Date(), body))).to.throw(/signature/);
  });
});
