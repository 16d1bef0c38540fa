import { expect } from 'chai';
import type { DeliveryEvent, WebhookEvent } from '../../domain/messaging-webhooks/index.js';
import { getDelivery, getWebhook, listDeliveries, MAX_ATTEMPTS_SHOWN, overdueDeliveries, webhooksProjectors } from '../../projections/messaging-webhooks.js';
import type { ReadStore } from '../../ports/read-store.js';
import { projectOneByOneAndBatched, projectionSpec, recordAll, type GivenEvent } from '../support/projection-spec.js';

const at = (m: number) => `2026-01-01T00:${String(m).padStart(2, '0')}:00.000Z`;
const hook = (event: WebhookEvent): GivenEvent => ({ streamId: 'msgwebhook-s1', event });
const delivery = (id: string, event: DeliveryEvent): GivenEvent => ({ streamId: `msgdelivery-${id}`, event });
const configured = (m: number, webhookId = 'w1'): GivenEvent =>
  hook({ type: 'WebhookConfigured', data: { sessionId: 's1', webhookId, url: 'https://example.com/h', events: ['message'], secretSealed: 'sealed', at: at(m) } });
const scheduled = (id: string, m: number, sessionId = 's1') =>
  delivery(id, {
    type: 'WebhookDeliveryScheduled',
    data: { deliveryId: id, sessionId, webhookId: 'w1', eventType: 'message', sourceEventId: `e-${id}`, messageId: `msg_${id}`, body: '{}', nextAttemptAt: at(m), at: at(m) },
  });
const attempted = (id: string, attempt: number, m: number, outcome: 'succeeded' | 'retry' | 'failed', next: string | null = null) =>
  delivery(id, {
    type: 'WebhookDeliveryAttempted',
    data: { attempt, statusCode: outcome === 'succeeded' ? 200 : 503, error: outcome === 'succeeded' ? null : 'HTTP_503', durationMs: 4, outcome, nextAttemptAt: next, at: at(m) },
  });

describe('messaging webhooks projection', () => {
  it('keeps the webhook: configured, counting failures, reset, deactivated, and configured again', async () => {
    await projectionSpec(webhooksProjectors)
      .given([
        configured(1),
        hook({ type: 'WebhookDeliveryFailureCounted', data: { deliveryId: 'd1', consecutiveFailures: 1, at: at(2) } }),
        hook({ type: 'WebhookDeliveryFailureCounted', data: { deliveryId: 'd2', consecutiveFailures: 2, at: at(3) } }),
        hook({ type: 'WebhookDeactivated', data: { reason: 'TOO_MANY_FAILURES', deliveryId: 'd2', statusCode: null, at: at(3) } }),
      ])
      .thenDocuments('messaging_webhooks', [
        { _id: 's1', url: 'https://example.com/h', events: ['message'], isActive: false, deactivatedReason: 'TOO_MANY_FAILURES', consecutiveFailures: 2, configuredAt: at(1), updatedAt: at(3), version: 3 },
      ]);
    await projectionSpec(webhooksProjectors)
      .given([
        configured(1),
        hook({ type: 'WebhookDeliveryFailureCounted', data: { deliveryId: 'd1', consecutiveFailures: 1, at: at(2) } }),
        hook({ type: 'WebhookFailuresReset', data: { deliveryId: 'd3', at: at(4) } }),
        hook({ type: 'WebhookDeactivated', data: { reason: 'GONE', deliveryId: 'd4', statusCode: 410, at: at(5) } }),
        configured(6, 'w2'),
      ])
      .then(async (store) => {
        const webhook = await getWebhook(store, 's1');
        expect(webhook).to.deep.include({ isActive: true, deactivatedReason: null, consecutiveFailures: 0, configuredAt: at(6), version: 4 });
        expect(await getWebhook(store, 'other')).to.equal(null);
      });
  });

  it('keeps each delivery with its attempts, its next attempt and why it was cancelled', async () => {
    await projectionSpec(webhooksProjectors)
      .given([
        scheduled('d1', 1),
        attempted('d1', 1, 2, 'retry', at(12)),
        attempted('d1', 2, 12, 'failed'),
        delivery('d1', { type: 'WebhookRedeliveryRequested', data: { requestedBy: 'u1', at: at(20) } }),
        scheduled('d2', 3),
        delivery('d2', { type: 'WebhookDeliveryCancelled', data: { reason: 'WEBHOOK_INACTIVE', at: at(4) } }),
        scheduled('d3', 5),
        attempted('d3', 1, 6, 'succeeded'),
      ])
      .thenDocuments('messaging_webhook_deliveries', [
        {
          _id: 'd1', sessionId: 's1', messageId: 'msg_d1', eventType: 'message', status: 'pending', attemptCount: 2, nextAttemptAt: at(20), cancelReason: null, createdAt: at(1), updatedAt: at(20), version: 3,
          attempts: [
            { attempt: 1, statusCode: 503, error: 'HTTP_503', durationMs: 4, outcome: 'retry', at: at(2) },
            { attempt: 2, statusCode: 503, error: 'HTTP_503', durationMs: 4, outcome: 'failed', at: at(12) },
          ],
        },
        { _id: 'd2', status: 'failed', attemptCount: 0, attempts: [], nextAttemptAt: null, cancelReason: 'WEBHOOK_INACTIVE', updatedAt: at(4) },
        { _id: 'd3', status: 'succeeded', attemptCount: 1, nextAttemptAt: null },
      ]);
  });

  it(`shows the last ${MAX_ATTEMPTS_SHOWN} attempts, lists a session's deliveries newest first, and finds the overdue ones`, async () => {
    const many = Array.from({ length: MAX_ATTEMPTS_SHOWN + 2 }, (_, i) => attempted('d-many', i + 1, 2, 'retry', at(59)));
    await projectionSpec(webhooksProjectors)
      .given([
        scheduled('d-many', 1),
        ...many,
        scheduled('d-due', 2),
        scheduled('d-done', 3),
        attempted('d-done', 1, 4, 'succeeded'),
        scheduled('d-other', 5, 's2'),
      ])
      .then(async (store) => {
        const crowded = (await getDelivery(store, 'd-many'))!;
        expect(crowded.attempts).to.have.length(MAX_ATTEMPTS_SHOWN);
        expect(crowded.attempts[0].attempt).to.equal(3);
        expect(crowded.attemptCount).to.equal(MAX_ATTEMPTS_SHOWN + 2);
        expect((await listDeliveries(store, 's1', undefined, 10, null)).items.map((d) => d._id)).to.deep.equal(['d-done', 'd-due', 'd-many']);
        expect((await listDeliveries(store, 's1', 'pending', 10, null)).items.map((d) => d._id)).to.deep.equal(['d-due', 'd-many']);
        const firstPage = await listDeliveries(store, 's1', undefined, 2, null);
        expect((await listDeliveries(store, 's1', undefined, 2, firstPage.nextCursor)).items.map((d) => d._id)).to.deep.equal(['d-many']);
        expect((await overdueDeliveries(store, new Date(at(10)), 10)).map((d) => d._id)).to.deep.equal(['d-due', 'd-other']);
        expect((await overdueDeliveries(store, new Date(at(59)), 10)).map((d) => d._id)).to.deep.equal(['d-due', 'd-other', 'd-many']);
        expect((await overdueDeliveries(store, new Date(at(59)), 1)).map((d) => d._id)).to.deep.equal(['d-due']);
      });
  });

  it('projects a batch of delivery events as event by event, and again unchanged after a redelivery', async () => {
    const first = recordAll([
      scheduled('d1', 1), scheduled('d2', 1), attempted('d1', 1, 2, 'succeeded'), scheduled('d3', 2),
      attempted('d2', 1, 2, 'retry', at(5)),
    ]);
    // The next batch: an attempt of a delivery scheduled in the first, and a new one.
    const second = recordAll([attempted('d2', 2, 5, 'failed'), scheduled('d4', 6)], 100);
    second[0].revision = 2;
    const deliveries = webhooksProjectors.find((p) => p.name === 'messaging-webhook-deliveries')!;
    const all = async (store: ReadStore) => store.collection('messaging_webhook_deliveries').find({}, { sort: { _id: 1 } });
    await projectOneByOneAndBatched(deliveries, [first, second], async ({ adapter, oneByOne, batched }) => {
      const expected = await all(oneByOne);
      expect(expected.map((d) => [d._id, d.status, d.attemptCount])).to.deep.equal([['d1', 'succeeded', 1], ['d2', 'failed', 2], ['d3', 'pending', 0], ['d4', 'pending', 0]]);
      expect(await all(batched), adapter).to.deep.equal(expected);
      await deliveries.projectBatch!([...first, ...second], batched);
      expect(await all(batched), `${adapter}, redelivered`).to.deep.equal(expected);
    });
  });
});
