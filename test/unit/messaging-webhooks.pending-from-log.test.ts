import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../../commands/handle.js';
import { executeDeliveryCommand, scheduleDelivery } from '../../commands/messaging-webhooks.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { PendingDeliveriesFromLog } from '../../infra/messaging-webhooks/pending-from-log.js';

/**
 * The sweep's source on a worker without a projected delivery read model: pending deliveries folded
 * from the log (real SQLite event store, events written by the real delivery commands).
 */
describe('webhook sweep: pending deliveries derived from the event log', () => {
  const store = new SqliteEventStore(':memory:');
  after(() => store.close());
  const at = (iso: string): CommandContext => ({ actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date(iso) });
  const schedule = (deliveryId: string, iso: string) =>
    scheduleDelivery(store, at(iso), { deliveryId, sessionId: 's1', webhookId: 'w1', eventType: 'message', sourceEventId: randomUUID(), messageId: `msg_${deliveryId}`, body: '{}' });
  const attempt = (deliveryId: string, n: number, iso: string, outcome: 'retry' | 'succeeded' | 'failed', next: string | null) =>
    executeDeliveryCommand(store, at(iso), deliveryId, { type: 'RecordAttempt', attempt: n, statusCode: outcome === 'succeeded' ? 200 : 503, error: outcome === 'succeeded' ? null : 'HTTP_503', durationMs: 5, outcome, nextAttemptAt: next });

  it('keeps only pending deliveries with their next attempt time, incrementally, most overdue first', async () => {
    await schedule('d-new', '2026-01-01T00:00:00.000Z'); // never attempted: due at once
    await schedule('d-retry', '2026-01-01T00:00:01.000Z');
    await attempt('d-retry', 1, '2026-01-01T00:00:02.000Z', 'retry', '2026-01-01T00:10:00.000Z');
    await schedule('d-done', '2026-01-01T00:00:03.000Z');
    await attempt('d-done', 1, '2026-01-01T00:00:04.000Z', 'succeeded', null);
    await schedule('d-cancelled', '2026-01-01T00:00:05.000Z');
    await executeDeliveryCommand(store, at('2026-01-01T00:00:06.000Z'), 'd-cancelled', { type: 'CancelDelivery', reason: 'WEBHOOK_INACTIVE' });

    const pending = new PendingDeliveriesFromLog(store);
    expect(await pending.refresh()).to.equal(7);
    expect(pending.size()).to.equal(2);
    expect(pending.overdue(new Date('2026-01-01T00:05:00.000Z'), 10).map((d) => d._id)).to.deep.equal(['d-new']);
    expect(pending.overdue(new Date('2026-01-01T01:00:00.000Z'), 10)).to.deep.equal([
      { _id: 'd-new', nextAttemptAt: '2026-01-01T00:00:00.000Z' },
      { _id: 'd-retry', nextAttemptAt: '2026-01-01T00:10:00.000Z' },
    ]);
    expect(pending.overdue(new Date('2026-01-01T01:00:00.000Z'), 1).map((d) => d._id)).to.deep.equal(['d-new']);

    // Later sweeps read only what was appended since: the retry ends failed, a redelivery is pending again.
    await attempt('d-retry', 2, '2026-01-01T00:10:01.000Z', 'failed', null);
    await attempt('d-new', 1, '2026-01-01T00:10:02.000Z', 'failed', null);
    await executeDeliveryCommand(store, at('2026-01-01T00:20:00.000Z'), 'd-new', { type: 'RequestRedelivery', sessionId: 's1', webhook: { isActive: true, deactivatedReason: null }, requestedBy: 'u1' });
    expect(await pending.refresh()).to.equal(3);
    expect(pending.overdue(new Date('2026-01-01T01:00:00.000Z'), 10)).to.deep.equal([{ _id: 'd-new', nextAttemptAt: '2026-01-01T00:20:00.000Z' }]);
    expect(await pending.refresh()).to.equal(0);
  });
});
