import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { loadDelivery } from '../../commands/messaging-webhooks.js';
import { webhookStreamId } from '../../domain/messaging-webhooks/index.js';
import { isRefusedAddress } from '../../infra/http/outbound.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { startWebhookReceiver, type Answer, type ReceivedDelivery, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The session webhook end to end over real HTTP: the seed's configuration contract to the letter,
 * then deliveries from real embedded sessions to a receiver on loopback that verifies every request
 * with the official standardwebhooks library. The retry schedule is shortened: attempt n+1 follows
 * attempt n by 200 ms × 2^(n-1) ± 20 %.
 */
const BASE_MS = 200;
const JITTER = 0.2;
const TIMEOUT_MS = 500;
const env = {
  RATE_LIMIT_AUTH_PER_MINUTE: '1000',
  ALLOW_PRIVATE_NETWORK: 'true',
  WEBHOOK_MAX_ATTEMPTS: '5',
  WEBHOOK_RETRY_BASE_MS: String(BASE_MS),
  WEBHOOK_RETRY_FACTOR: '2',
  WEBHOOK_RETRY_JITTER: String(JITTER),
  WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  WEBHOOK_FAILURE_THRESHOLD: '3',
  WEBHOOK_SWEEP_INTERVAL_MS: '1000',
  WEBHOOK_RECOVERY_GRACE_MS: '10000',
};

for (const mode of availableModes()) {
  describe(`messaging webhooks (${mode})`, function () {
    this.timeout(60_000);
    let service: TestService;
    let owner: RegisteredUser;
    const receivers: WebhookReceiver[] = [];
    const as = (method: string, path: string, body?: unknown, user: RegisteredUser = owner) => call(service.baseUrl, method, path, body, user.auth);

    before(async () => {
      service = await startTestService(mode, env);
      owner = await registerUser(service.baseUrl);
    });
    after(async () => {
      for (const r of receivers) await r.close();
      await service?.stop();
    });

    async function session(user: RegisteredUser = owner) {
      const res = await as('POST', '/messaging/sessions', { name: `s-${randomBytes(4).toString('hex')}` }, user);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.session.status).to.equal('WORKING');
      return { id: res.body.session.id as string, address: res.body.session.address as string };
    }
    async function receiver(secret: string, respond?: (d: ReceivedDelivery, attempt: number) => Answer) {
      const r = await startWebhookReceiver(secret, respond);
      receivers.push(r);
      return r;
    }
    async function configure(sessionId: string, url: string, secret: string, events: string[] = ['*']) {
      const res = await as('POST', `/messaging/sessions/${sessionId}/webhook`, { url, events, secret });
      expect(res.status, res.text).to.equal(200);
      return res;
    }
    async function send(fromId: string, toAddress: string, text: string) {
      const res = await as('POST', `/messaging/sessions/${fromId}/messages`, { chatId: toAddress, text });
      expect(res.status, res.text).to.equal(201);
      return res.body.message.id as string;
    }
    const deliveries = async (sessionId: string) => {
      const res = await as('GET', `/messaging/sessions/${sessionId}/webhook/deliveries?limit=100`);
      expect(res.status, res.text).to.equal(200);
      return res.body.items as Array<{ id: string; webhookId: string; event: string; status: string; attempts: Array<{ statusCode: number | null; error: string | null; durationMs: number; outcome: string; at: string }>; nextAttemptAt: string | null }>;
    };
    const settled = (sessionId: string, count: number, what = `${count} settled deliveries`) =>
      waitUntil(what, async () => {
        const items = await deliveries(sessionId);
        return items.length === count && items.every((d) => d.status !== 'pending') ? items : null;
      });
    /** This process's timer wheel holds no attempt: every armed retry has run (and found its delivery's state). */
    const wheelIdle = () => {
      const { armed, queued, inFlight } = service.services.webhooks.stats();
      return armed + queued + inFlight === 0;
    };
    /** Every delivery of the session settled and no attempt left in the wheel: nothing can still reach a receiver. */
    const quiet = (sessionId: string) =>
      waitUntil(`${sessionId}'s deliveries to settle and the attempt wheel to empty`, async () => {
        const items = await deliveries(sessionId);
        return items.every((d) => d.status !== 'pending') && wheelIdle() ? items : null;
      });
    const messagesFor = (r: WebhookReceiver, sessionId: string, type: string) => [...r.accepted().values()].filter((d) => d.payload?.session === sessionId && d.payload.type === type);

    describe('configuration (the seed contract)', () => {
      it('answers 200 {success, webhook: {url, events, isActive}} exactly, and keeps the secret sealed', async () => {
        const s = await session();
        const secret = `secret-${randomBytes(8).toString('hex')}`;
        const res = await configure(s.id, 'https://hooks.example.com/in', secret, ['message', 'session.status']);
        expect(res.body).to.deep.equal({ success: true, webhook: { url: 'https://hooks.example.com/in', events: ['message', 'session.status'], isActive: true } });
        expect(Object.keys(res.body)).to.deep.equal(['success', 'webhook']);
        expect(Object.keys(res.body.webhook)).to.deep.equal(['url', 'events', 'isActive']);
        const stored = await service.services.eventStore.readStream(webhookStreamId(s.id));
        expect(JSON.stringify(stored)).to.not.include(secret);
        const read = await as('GET', `/messaging/sessions/${s.id}/webhook`);
        expect(read.status).to.equal(200);
        expect(read.body.webhook).to.include({ url: 'https://hooks.example.com/in', isActive: true, consecutiveFailures: 0 });
        expect(read.text).to.not.include(secret);
      });

      it('answers 401 without credentials, 404 for an unknown or foreign session', async () => {
        const s = await session();
        const body = { url: 'https://hooks.example.com/in', events: ['*'], secret: 'x' };
        const anonymous = await call(service.baseUrl, 'POST', `/messaging/sessions/${s.id}/webhook`, body);
        expect(anonymous.status).to.equal(401);
        expect(anonymous.body.success).to.equal(false);
        // Credentials are judged before the body: an anonymous caller learns nothing about it.
        expect((await call(service.baseUrl, 'POST', `/messaging/sessions/${s.id}/webhook`, { url: 'nope' })).status).to.equal(401);
        const unknown = await as('POST', '/messaging/sessions/no-such-session/webhook', body);
        expect(unknown.status).to.equal(404);
        expect(unknown.body.error.code).to.equal('MESSAGING_SESSION_NOT_FOUND');
        const stranger = await registerUser(service.baseUrl);
        const foreign = await as('POST', `/messaging/sessions/${s.id}/webhook`, body, stranger);
        expect(foreign.status).to.equal(404);
        expect(foreign.body.error.code).to.equal('MESSAGING_SESSION_NOT_FOUND');
        expect((await as('GET', `/messaging/sessions/${s.id}/webhook/deliveries`, undefined, stranger)).status).to.equal(404);
      });

      it('answers 400 naming the field for a non-URL, an unknown event name and an empty secret', async () => {
        const s = await session();
        const good = { url: 'https://hooks.example.com/in', events: ['message'], secret: 'x' };
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ ...good, url: 'not a url' }, 'body.url'],
          [{ ...good, url: 'ftp://hooks.example.com/in' }, 'body.url'],
          [{ ...good, events: ['message', 'message.any'] }, 'body.events.1'],
          [{ ...good, secret: '' }, 'body.secret'],
          [{ ...good, secret: '   ' }, 'body.secret'],
        ];
        for (const [body, field] of cases) {
          const res = await as('POST', `/messaging/sessions/${s.id}/webhook`, body);
          expect(res.status, JSON.stringify(body)).to.equal(400);
          expect(res.body.error.code).to.equal('VALIDATION_FAILED');
          expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).to.include(field);
        }
      });
    });

    describe('deliveries', () => {
      it('two sessions exchange messages: `message` for the recipient, `message_ack` for the sender after mark-as-read, each once', async () => {
        const secret = `plain secret ✓ ${randomBytes(4).toString('hex')}`;
        const r = await receiver(secret);
        const alice = await session();
        const bob = await session();
        await configure(alice.id, r.url, secret, ['message', 'message_ack']);
        await configure(bob.id, r.url, secret, ['message', 'message_ack']);

        const messageId = await send(alice.id, bob.address, 'hello bob');
        const [received] = await r.waitFor('bob\'s message', () => {
          const got = messagesFor(r, bob.id, 'message');
          return got.length > 0 ? got : null;
        });
        expect(received.payload).to.include({ type: 'message', session: bob.id });
        expect(received.payload!.data).to.include({ id: messageId, text: 'hello bob', fromMe: false, chatId: alice.address });
        expect(Object.keys(received.payload!)).to.deep.equal(['type', 'timestamp', 'session', 'data']);

        const read = await as('POST', `/messaging/sessions/${bob.id}/chats/${encodeURIComponent(alice.address)}/read`, { all: true });
        expect(read.status, read.text).to.equal(200);
        await r.waitFor('alice\'s READ ack', () => messagesFor(r, alice.id, 'message_ack').find((d) => d.payload!.data.ack === 'READ'));

        // Let late duplicates, if any, arrive before counting: the READ ack is the last event of either
        // session, so its delivery proves the deliveries before it were created; once all are settled
        // and no attempt is armed, none can be sent again.
        await quiet(alice.id);
        await quiet(bob.id);
        expect(r.received.every((d) => d.verified), r.received.map((d) => d.verifyError).join()).to.equal(true);
        expect(messagesFor(r, bob.id, 'message')).to.have.length(1);
        expect(messagesFor(r, alice.id, 'message')).to.have.length(0);
        const reads = messagesFor(r, alice.id, 'message_ack').filter((d) => d.payload!.data.ack === 'READ');
        expect(reads).to.have.length(1);
        expect(reads[0].payload!.data).to.include({ messageId, chatId: bob.address });
        const acks = messagesFor(r, alice.id, 'message_ack').map((d) => d.payload!.data.ack);
        expect(new Set(acks).size, acks.join()).to.equal(acks.length);
        // The log shows each delivery succeeded on its one attempt, under the id the receiver saw.
        const log = await deliveries(bob.id);
        expect(log).to.have.length(1);
        expect(log[0]).to.include({ event: 'message', status: 'succeeded', webhookId: received.webhookId });
      });

      it('retries a receiver that fails three times (500, timeout, 503), then succeeds, on the backoff schedule', async () => {
        const secret = 'retry-secret';
        const r = await receiver(secret, (_d, attempt) => (attempt === 1 ? { status: 500 } : attempt === 2 ? { status: 200, hang: true } : attempt === 3 ? { status: 503 } : { status: 204 }));
        const [sender, target] = [await session(), await session()];
        await configure(target.id, r.url, secret, ['message']);
        await send(sender.id, target.address, 'try again');
        const [delivery] = await settled(target.id, 1);
        expect(delivery.status).to.equal('succeeded');
        expect(delivery.attempts.map((a) => a.error)).to.deep.equal(['HTTP_500', 'OUTBOUND_TIMEOUT', 'HTTP_503', null]);
        expect(delivery.attempts.map((a) => a.statusCode)).to.deep.equal([500, null, 503, 204]);
        expect(delivery.attempts.map((a) => a.outcome)).to.deep.equal(['retry', 'retry', 'retry', 'succeeded']);

        const sent = r.received.filter((d) => d.webhookId === delivery.webhookId);
        expect(sent).to.have.length(4);
        expect(sent.every((d) => d.verified)).to.equal(true);
        for (let n = 1; n < sent.length; n++) {
          // The wait after attempt n: from the moment its answer was judged (its `at`) to the next arrival.
          const wait = sent[n].receivedAt - Date.parse(delivery.attempts[n - 1].at);
          const planned = BASE_MS * 2 ** (n - 1);
          expect(wait, `wait after attempt ${n}`).to.be.within(planned * (1 - JITTER) - 2, planned * (1 + JITTER) + 300);
        }
        expect(delivery.attempts[1].durationMs).to.be.within(TIMEOUT_MS - 10, TIMEOUT_MS + 300);
      });

      it('after the last attempt (WEBHOOK_MAX_ATTEMPTS) the delivery is failed and counted against the webhook', async () => {
        const secret = 'always-500';
        const r = await receiver(secret, () => ({ status: 500 }));
        const [sender, target] = [await session(), await session()];
        await configure(target.id, r.url, secret, ['message']);
        await send(sender.id, target.address, 'never accepted');
        const [delivery] = await settled(target.id, 1);
        expect(delivery.status).to.equal('failed');
        expect(delivery.attempts.map((a) => a.outcome)).to.deep.equal(['retry', 'retry', 'retry', 'retry', 'failed']);
        expect(delivery.nextAttemptAt).to.equal(null);
        expect(r.received.filter((d) => d.webhookId === delivery.webhookId)).to.have.length(5);
        const hook = await waitUntil('the failure to be counted', async () => {
          const res = await as('GET', `/messaging/sessions/${target.id}/webhook`);
          return res.body.webhook?.consecutiveFailures === 1 ? res.body.webhook : null;
        });
        // One failed delivery is below WEBHOOK_FAILURE_THRESHOLD (3 here): still active.
        expect(hook.isActive).to.equal(true);
      });

      it('honours Retry-After on 429', async () => {
        const secret = 'slow-down';
        const r = await receiver(secret, (_d, attempt) => (attempt === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
        const [sender, target] = [await session(), await session()];
        await configure(target.id, r.url, secret, ['message']);
        await send(sender.id, target.address, 'not so fast');
        const [delivery] = await settled(target.id, 1);
        expect(delivery.attempts.map((a) => a.statusCode)).to.deep.equal([429, 200]);
        const sent = r.received.filter((d) => d.webhookId === delivery.webhookId);
        expect(sent[1].receivedAt - sent[0].receivedAt).to.be.at.least(1000 - 20);
      });

      it('a 410 deactivates the webhook: no further deliveries until it is configured again', async () => {
        const secret = 'gone-secret';
        let gone = true;
        const r = await receiver(secret, () => (gone ? { status: 410 } : { status: 200 }));
        const [sender, target] = [await session(), await session()];
        await configure(target.id, r.url, secret, ['message']);
        await send(sender.id, target.address, 'first');
        const [failed] = await settled(target.id, 1);
        expect(failed).to.include({ status: 'failed' });
        expect(failed.attempts.map((a) => a.error)).to.deep.equal(['HTTP_410']);
        const hook = await waitUntil('the webhook to be inactive', async () => {
          const res = await as('GET', `/messaging/sessions/${target.id}/webhook`);
          return res.body.webhook?.isActive === false ? res.body.webhook : null;
        });
        expect(hook.deactivatedReason).to.equal('GONE');
        const refused = await as('POST', `/messaging/sessions/${target.id}/webhook/deliveries/${failed.id}/redeliver`);
        expect(refused.status).to.equal(409);
        expect(refused.body.error.code).to.equal('WEBHOOK_INACTIVE');

        await send(sender.id, target.address, 'while inactive');
        // The network hands the message to the target asynchronously: wait until it has it.
        await waitUntil('the target to receive the message', async () => {
          const res = await as('GET', `/messaging/sessions/${target.id}/chats/${encodeURIComponent(sender.address)}/messages`);
          return res.body.items?.some((m: { text: string }) => m.text === 'while inactive');
        });
        gone = false;
        await configure(target.id, r.url, secret, ['message']);
        await send(sender.id, target.address, 'after reconfiguring');
        await r.waitFor('the message after reconfiguring', () => messagesFor(r, target.id, 'message').find((d) => d.payload!.data.text === 'after reconfiguring'));
        const log = await settled(target.id, 2).catch(async (err) => {
          throw new Error(`${err.message}: ${JSON.stringify(await deliveries(target.id))} ${JSON.stringify(r.received.map((d) => [d.webhookId, d.payload?.data.text, d.answeredStatus]))}`);
        });
        expect(log.map((d) => d.status)).to.deep.equal(['succeeded', 'failed']);
        expect(r.received.some((d) => d.payload?.data.text === 'while inactive')).to.equal(false);
      });

      it('redelivers a failed delivery with the same webhook-id; only a failed one (409 otherwise, 404 unknown)', async () => {
        const secret = 'redeliver-secret';
        let accept = false;
        const r = await receiver(secret, () => (accept ? { status: 200 } : { status: 400 }));
        const [sender, target] = [await session(), await session()];
        await configure(target.id, r.url, secret, ['message']);
        await send(sender.id, target.address, 'refused at first');
        const [failed] = await settled(target.id, 1);
        expect(failed.status).to.equal('failed');
        expect(failed.attempts.map((a) => a.error)).to.deep.equal(['HTTP_400']);

        accept = true;
        const again = await as('POST', `/messaging/sessions/${target.id}/webhook/deliveries/${failed.id}/redeliver`);
        expect(again.status, again.text).to.equal(202);
        expect(again.body.delivery).to.include({ id: failed.id, status: 'pending', webhookId: failed.webhookId });
        const [done] = await settled(target.id, 1);
        expect(done.status).to.equal('succeeded');
        expect(done.attempts.map((a) => a.statusCode)).to.deep.equal([400, 200]);
        const sent = r.received.filter((d) => d.webhookId === failed.webhookId);
        expect(sent).to.have.length(2);
        expect(sent[0].body).to.equal(sent[1].body);

        const twice = await as('POST', `/messaging/sessions/${target.id}/webhook/deliveries/${failed.id}/redeliver`);
        expect(twice.status).to.equal(409);
        expect(twice.body.error.code).to.equal('DELIVERY_NOT_FAILED');
        const unknown = await as('POST', `/messaging/sessions/${target.id}/webhook/deliveries/0123456789abcdef/redeliver`);
        expect(unknown.status).to.equal(404);
        expect(unknown.body.error.code).to.equal('DELIVERY_NOT_FOUND');
      });

      it('marks the webhook inactive after WEBHOOK_FAILURE_THRESHOLD consecutive failed deliveries', async () => {
        const secret = 'threshold-secret';
        const r = await receiver(secret, () => ({ status: 422 }));
        const [sender, target] = [await session(), await session()];
        await configure(target.id, r.url, secret, ['message']);
        for (let i = 0; i < 3; i++) {
          await send(sender.id, target.address, `doomed ${i}`);
          await settled(target.id, i + 1);
        }
        const hook = await waitUntil('the webhook to be inactive', async () => {
          const res = await as('GET', `/messaging/sessions/${target.id}/webhook`);
          return res.body.webhook?.isActive === false ? res.body.webhook : null;
        });
        expect(hook).to.include({ deactivatedReason: 'TOO_MANY_FAILURES', consecutiveFailures: 3 });
      });

      it('deleting the session stops its pending deliveries', async () => {
        const secret = 'delete-secret';
        const r = await receiver(secret, () => ({ status: 503 }));
        const [sender, target] = [await session(), await session()];
        await configure(target.id, r.url, secret, ['message']);
        await send(sender.id, target.address, 'never delivered');
        const [pending] = await waitUntil('a failed attempt', async () => {
          const items = await deliveries(target.id);
          return items.length === 1 && items[0].attempts.length > 0 ? items : null;
        });
        expect(pending.status).to.equal('pending');
        const deleted = await as('DELETE', `/messaging/sessions/${target.id}`);
        expect(deleted.status, deleted.text).to.equal(200);
        const state = await waitUntil('the delivery to stop', async () => {
          const { state } = await loadDelivery(service.services.eventStore, pending.id);
          return state.status === 'failed' ? state : null;
        });
        const events = await service.services.eventStore.readStream(`msgdelivery-${pending.id}`);
        expect(events.map((e) => e.type)).to.include('WebhookDeliveryCancelled');
        const attempts = state.attempts;
        // Any retry armed before the cancellation has now run and found the delivery stopped.
        await waitUntil('no webhook attempt armed, queued or in flight', async () => wheelIdle());
        expect((await loadDelivery(service.services.eventStore, pending.id)).state.attempts).to.equal(attempts);
        expect(r.received.filter((d) => d.webhookId === pending.webhookId).length).to.equal(attempts);
      });
    });

    describe('outbound address rule (ALLOW_PRIVATE_NETWORK=false)', () => {
      let strict: TestService;
      let user: RegisteredUser;
      before(async () => {
        strict = await startTestService(mode, { ...env, ALLOW_PRIVATE_NETWORK: 'false' });
        user = await registerUser(strict.baseUrl);
      });
      after(async () => strict?.stop());

      it('refuses a literal private or loopback URL at configuration, and a name resolving to one at delivery', async () => {
        const on = (method: string, path: string, body?: unknown) => call(strict.baseUrl, method, path, body, user.auth);
        const created = await Promise.all(['a', 'b'].map((n) => on('POST', '/messaging/sessions', { name: `strict-${n}-${randomBytes(3).toString('hex')}` })));
        const [sender, target] = created.map((res) => res.body.session as { id: string; address: string });
        for (const url of ['http://127.0.0.1:9/in', 'http://[::1]/in', 'http://10.1.2.3/in', 'http://localhost./in']) {
          const res = await on('POST', `/messaging/sessions/${target.id}/webhook`, { url, events: ['*'], secret: 'x' });
          expect(res.status, url).to.equal(400);
          expect(res.body.error.code).to.equal('WEBHOOK_URL_REFUSED');
        }
        const name = hostname();
        const resolved = await lookup(name).catch(() => null);
        if (!resolved || !isRefusedAddress(resolved.address)) {
          console.log(`SKIP delivery-time refusal: the host name ${name} does not resolve to a private address here`);
          return;
        }
        const r = await receiver('strict');
        const url = `http://${name}:${r.port}/in`;
        expect((await on('POST', `/messaging/sessions/${target.id}/webhook`, { url, events: ['message'], secret: 'strict' })).status).to.equal(200);
        expect((await on('POST', `/messaging/sessions/${sender.id}/messages`, { chatId: target.address, text: 'refused' })).status).to.equal(201);
        const failed = await waitUntil('the delivery to fail', async () => {
          const res = await on('GET', `/messaging/sessions/${target.id}/webhook/deliveries`);
          return res.body.items?.[0]?.status === 'failed' ? res.body.items[0] : null;
        });
        expect(failed.attempts.map((a: { error: string }) => a.error)).to.deep.equal(['OUTBOUND_ADDRESS_REFUSED']);
        expect(r.received).to.have.length(0);
      });
    });
  });
}
