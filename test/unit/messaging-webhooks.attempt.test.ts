import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../../commands/handle.js';
import { executeWebhookCommand, loadDelivery, loadWebhook, scheduleDelivery } from '../../commands/messaging-webhooks.js';
import { attemptDelivery, type AttemptPorts } from '../../consumers/messaging-webhooks-attempt.js';
import { sweepOverdueDeliveries } from '../../consumers/messaging-webhooks-sweep.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { SendOutcome, SignedRequest } from '../../ports/messaging-webhooks.js';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/**
 * The attempt and the sweep are application services on ports: a real event store (SQLite in
 * memory), a clock the test sets, and a sender that answers what the test says.
 */
describe('webhook attempts and the recovery sweep, on ports', () => {
  let store: SqliteEventStore;
  let time: number;
  let answer: SendOutcome;
  let sent: SignedRequest[];
  let rearmed: Array<[string, string]>;
  const clock = { now: () => new Date(time) };
  const ports = (): AttemptPorts => ({
    eventStore: store,
    clock,
    logger: silent,
    sender: {
      async send(request) {
        sent.push(request);
        return answer;
      },
      refusesOutright: () => false,
    },
    policy: { maxAttempts: 3, baseMs: 1000, factor: 2, maxMs: 10_000, jitter: 0.2, retryAfterMaxMs: 60_000 },
    failureThreshold: 2,
    random: () => 0.5,
  });
  const context = (): CommandContext => ({ actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: clock.now() });
  const attempt = (deliveryId: string, signal = new AbortController().signal) => attemptDelivery(ports(), deliveryId, signal, (id, dueAt) => rearmed.push([id, dueAt.toISOString()]));
  const configure = () =>
    executeWebhookCommand(store, context(), 's1', { type: 'ConfigureWebhook', sessionId: 's1', webhookId: 'w1', url: 'https://example.com/h', events: ['*'], secretSealed: 'sealed-secret' });
  const schedule = (deliveryId: string) =>
    scheduleDelivery(store, context(), { deliveryId, sessionId: 's1', webhookId: 'w1', eventType: 'message', sourceEventId: randomUUID(), messageId: `msg_${deliveryId}`, body: '{"n":1}' });

  beforeEach(() => {
    store = new SqliteEventStore(':memory:');
    time = T0;
    answer = { kind: 'answered', statusCode: 204, retryAfter: undefined, durationMs: 7 };
    sent = [];
    rearmed = [];
  });
  afterEach(() => store.close());

  it('sends the signed body once due, records the answer, and re-arms a retry for its time', async () => {
    await configure();
    await schedule('d1');
    answer = { kind: 'answered', statusCode: 503, retryAfter: undefined, durationMs: 7 };
    await attempt('d1');
    expect(sent.map((r) => [r.url, r.secretSealed, r.messageId, r.body])).to.deep.equal([['https://example.com/h', 'sealed-secret', 'msg_d1', '{"n":1}']]);
    const retry = await loadDelivery(store, 'd1');
    expect(retry.state).to.include({ status: 'pending', attempts: 1, nextAttemptAt: new Date(T0 + 1000).toISOString() });
    expect(rearmed).to.deep.equal([['d1', new Date(T0 + 1000).toISOString()]]);

    // Too early: re-armed for its time, nothing sent.
    await attempt('d1');
    expect(sent).to.have.length(1);
    expect(rearmed.at(-1)).to.deep.equal(['d1', new Date(T0 + 1000).toISOString()]);

    time = T0 + 1000;
    answer = { kind: 'answered', statusCode: 200, retryAfter: undefined, durationMs: 3 };
    await attempt('d1');
    expect((await loadDelivery(store, 'd1')).state).to.include({ status: 'succeeded', attempts: 2, nextAttemptAt: null });
    // A settled delivery is not attempted again.
    await attempt('d1');
    expect(sent).to.have.length(2);
  });

  it('cancels without sending when the webhook is missing or inactive; an aborted attempt records nothing', async () => {
    await schedule('d-none');
    await attempt('d-none');
    expect(sent).to.deep.equal([]);
    expect((await store.readStream('msgdelivery-d-none')).map((e) => [e.type, (e.data as { reason?: string }).reason])).to.deep.equal([
      ['WebhookDeliveryScheduled', undefined],
      ['WebhookDeliveryCancelled', 'WEBHOOK_NOT_CONFIGURED'],
    ]);

    await configure();
    await schedule('d-aborted');
    answer = { kind: 'aborted' };
    await attempt('d-aborted');
    expect((await loadDelivery(store, 'd-aborted')).state).to.include({ status: 'pending', attempts: 0 });

    await executeWebhookCommand(store, context(), 's1', { type: 'DeactivateWebhook', reason: 'SESSION_DELETED', deliveryId: null, statusCode: null });
    await attempt('d-aborted');
    expect((await loadDelivery(store, 'd-aborted')).state.status).to.equal('failed');
  });

  it("keeps the webhook's health: a 410 deactivates it, failures count up to the threshold", async () => {
    await configure();
    await schedule('d1');
    answer = { kind: 'answered', statusCode: 400, retryAfter: undefined, durationMs: 1 };
    await attempt('d1');
    expect((await loadWebhook(store, 's1')).state.failingDeliveryIds).to.deep.equal(['d1']);
    await schedule('d2');
    answer = { kind: 'answered', statusCode: 204, retryAfter: undefined, durationMs: 1 };
    await attempt('d2');
    expect((await loadWebhook(store, 's1')).state.failingDeliveryIds).to.deep.equal([]);
    await schedule('d3');
    answer = { kind: 'answered', statusCode: 410, retryAfter: undefined, durationMs: 1 };
    await attempt('d3');
    expect((await loadWebhook(store, 's1')).state).to.include({ isActive: false, deactivatedReason: 'GONE' });
    expect((await loadDelivery(store, 'd3')).state.status).to.equal('failed');
  });

  it('honours Retry-After from the answer, and records a network failure by its code', async () => {
    await configure();
    await schedule('d1');
    answer = { kind: 'answered', statusCode: 429, retryAfter: '5', durationMs: 1 };
    await attempt('d1');
    expect((await loadDelivery(store, 'd1')).state.nextAttemptAt).to.equal(new Date(T0 + 5000).toISOString());
    time = T0 + 5000;
    answer = { kind: 'failed', errorCode: 'OUTBOUND_TIMEOUT', durationMs: 10_000 };
    await attempt('d1');
    const events = await store.readStream('msgdelivery-d1');
    expect(events.at(-1)!.data).to.include({ attempt: 2, statusCode: null, error: 'OUTBOUND_TIMEOUT', durationMs: 10_000, outcome: 'retry' });
  });

  it('the sweep arms the overdue deliveries this process does not hold, and nothing once closed', async () => {
    const armed: string[] = [];
    let closed = false;
    const sweep = () =>
      sweepOverdueDeliveries({
        clock,
        logger: silent,
        graceMs: 30_000,
        closed: () => closed,
        overdue: {
          async overdue(dueBefore, limit) {
            expect(dueBefore.toISOString()).to.equal(new Date(time - 30_000).toISOString());
            return [{ _id: 'held', nextAttemptAt: null }, { _id: 'lost', nextAttemptAt: null }].slice(0, limit);
          },
        },
        timers: { schedule: (id) => armed.push(id), holds: (id) => id === 'held' },
      });
    expect(await sweep()).to.equal(1);
    expect(armed).to.deep.equal(['lost']);
    closed = true;
    expect(await sweep()).to.equal(0);
  });
});
