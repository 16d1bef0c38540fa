import { expect } from 'chai';
import { createHmac, randomBytes } from 'node:crypto';
import { msgSessionStreamId } from '../../domain/messaging/index.js';
import { startFakeWaha, type FakeWaha } from '../support/fake-waha.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { messagingClient } from '../support/messaging-client.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { expectError } from '../api/orgs-support.js';
import { call } from '../support/http.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

const HMAC_KEY = `hmac-${randomBytes(16).toString('hex')}`;

for (const mode of availableModes()) {
  describe(`Messaging WAHA adapter against a fake WAHA on loopback (${mode})`, function () {
    this.timeout(120_000);
    let waha: FakeWaha;
    let svc: TestService;
    let owner: RegisteredUser;
    let client: ReturnType<typeof messagingClient>;
    before(async () => {
      waha = await startFakeWaha();
      svc = await startTestService(mode, {
        RATE_LIMIT_AUTH_PER_MINUTE: '1000',
        MESSAGING_WAHA_URL: waha.url,
        MESSAGING_WAHA_API_KEY: waha.apiKey,
        MESSAGING_WAHA_WEBHOOK_HMAC_KEY: HMAC_KEY,
        ALLOW_PRIVATE_NETWORK: 'true',
      });
      owner = await registerUser(svc.baseUrl);
      client = messagingClient(svc.baseUrl, owner.auth);
    });
    const receivers: Array<{ close(): Promise<void> }> = [];
    after(async () => {
      for (const r of receivers) await r.close();
      await waha?.close();
      await svc?.stop();
    });

    const statusOf = async (id: string) => (await client.api('GET', `/messaging/sessions/${id}/status`)).body.status;

    async function pairedSession(name: string) {
      const session = await client.createSession(name, { provider: 'waha' });
      await waitUntil('SCAN_QR_CODE', async () => (await statusOf(session.id)).status === 'SCAN_QR_CODE');
      expect(await waha.scan(session.id)).to.equal(200);
      await waitUntil('WORKING', async () => (await statusOf(session.id)).status === 'WORKING');
      return session;
    }

    it('init registers the session with its webhook, passes the QR through, WORKING after the scan', async () => {
      const session = await client.createSession('phone', { provider: 'waha' });
      expect(session.status).to.equal('SCAN_QR_CODE');
      const fake = waha.session(session.id)!;
      expect(session.qr).to.equal(fake.qr);
      const create = waha.requests.find((r) => r.method === 'POST' && r.path === '/api/sessions' && r.body.name === session.id)!;
      expect(create.apiKey).to.equal(waha.apiKey);
      expect(create.body.config.webhooks[0].url).to.equal(`${svc.baseUrl}/messaging/providers/waha/events`);
      expect(create.body.config.webhooks[0].events).to.include.members(['message', 'message.ack', 'session.status']);
      expect(create.body.config.webhooks[0].hmac.key).to.equal(HMAC_KEY);

      expect(await statusOf(session.id)).to.include({ status: 'SCAN_QR_CODE', qr: fake.qr });
      // Sending before the phone is paired: 409 with a clear code.
      const early = await client.api('POST', `/messaging/sessions/${session.id}/messages`, { chatId: '15551234567@c.us', text: 'too early' });
      expectError(early, 409, 'MESSAGING_SESSION_NOT_WORKING');
      // The user's webhook hears the pairing as `session.status` (signed, verified by the receiver).
      const secret = `status-${randomBytes(6).toString('hex')}`;
      const receiver = await startWebhookReceiver(secret);
      receivers.push(receiver);
      const hook = await call(svc.baseUrl, 'POST', `/messaging/sessions/${session.id}/webhook`, { url: receiver.url, events: ['session.status'], secret }, owner.auth);
      expect(hook.status, hook.text).to.equal(200);

      expect(await waha.scan(session.id)).to.equal(200);
      const working = await waitUntil('WORKING', async () => {
        const s = await statusOf(session.id);
        return s.status === 'WORKING' && s;
      });
      expect(working.qr).to.equal(null);
      expect(working.me).to.deep.equal(fake.me);
      const statuses = (await svc.services.eventStore.readStream(msgSessionStreamId(session.id)))
        .filter((e) => e.type === 'MessagingSessionStatusChanged')
        .map((e) => (e.data as { status: string }).status);
      expect(statuses).to.deep.equal(['STARTING', 'SCAN_QR_CODE', 'WORKING']);
      const heard = await receiver.waitFor('session.status WORKING', () => [...receiver.accepted().values()].find((d) => d.payload?.type === 'session.status' && d.payload.data.status === 'WORKING'));
      expect(heard.verified).to.equal(true);
      expect(heard.payload!.session).to.equal(session.id);
      expect(heard.payload!.data).to.deep.include({ status: 'WORKING', previous: 'SCAN_QR_CODE', me: fake.me });
      // Only what happened after the configuration, once each.
      expect(receiver.received.every((d) => d.payload?.type === 'session.status' && d.payload.data.status === 'WORKING')).to.equal(true);
    });

    it('sends text through POST /api/sendText with X-Api-Key; the ack comes back by webhook (PENDING → SERVER)', async () => {
      const session = await pairedSession('sender');
      const sent = await client.send(session.id, '15551234567@c.us', 'hello from WAHA', 'false_15551234567@c.us_QUOTED');
      expect(sent.ack).to.equal('PENDING');
      const call = waha.requests.find((r) => r.path === '/api/sendText' && r.body.session === session.id)!;
      expect(call.apiKey).to.equal(waha.apiKey);
      expect(call.body).to.deep.equal({ session: session.id, chatId: '15551234567@c.us', text: 'hello from WAHA', reply_to: 'false_15551234567@c.us_QUOTED' });
      expect(sent.id).to.equal(waha.session(session.id)!.messages.at(-1)!.id);
      await client.waitForAck(session.id, '15551234567@c.us', sent.id, 'SERVER');
    });

    it('an inbound message event becomes MessageReceived; mark read calls sendSeen; groups come from WAHA', async () => {
      const session = await pairedSession('receiver');
      const { status, id } = await waha.receive(session.id, { from: '15559876543@c.us', body: 'hi there' });
      expect(status).to.equal(200);
      const events = await svc.services.eventStore.readStream(msgSessionStreamId(session.id));
      const received = events.find((e) => e.type === 'MessageReceived')!;
      expect((received.data as any).message).to.include({ id, chatId: '15559876543@c.us', from: '15559876543@c.us', text: 'hi there', fromMe: false });
      const message = await client.waitForMessage(session.id, '15559876543@c.us', id);
      expect(message).to.include({ text: 'hi there', read: false });
      // The chat is a second document of the same projection: it may land a moment after the message.
      const chat = await waitUntil('the chat', async () => (await client.chats(session.id)).items[0]);
      expect(chat).to.include({ id: '15559876543@c.us', unreadCount: 1 });

      const read = await client.api('POST', `/messaging/sessions/${session.id}/chats/15559876543@c.us/read`, { all: true });
      expect(read.status, read.text).to.equal(200);
      expect(read.body.marked).to.equal(1);
      const seen = waha.requests.find((r) => r.path === '/api/sendSeen' && r.body.session === session.id)!;
      expect(seen.body).to.deep.equal({ session: session.id, chatId: '15559876543@c.us', messageIds: [id] });
      expect(seen.apiKey).to.equal(waha.apiKey);

      // A redelivered event (WAHA retries) is recorded once.
      await waha.receive(session.id, { from: '15559876543@c.us', body: 'hi there', id });
      const again = (await svc.services.eventStore.readStream(msgSessionStreamId(session.id))).filter((e) => e.type === 'MessageReceived');
      expect(again).to.have.length(1);

      waha.addGroup(session.id, { id: '120363000000000000@g.us', name: 'Family', participants: ['15559876543@c.us', '15550000000@c.us'] });
      const groups = await client.api('GET', `/messaging/sessions/${session.id}/groups`);
      expect(groups.status, groups.text).to.equal(200);
      expect(groups.body.items).to.deep.equal([{ id: '120363000000000000@g.us', name: 'Family', participants: ['15559876543@c.us', '15550000000@c.us'] }]);
    });

    it('refuses inbound events with a missing or wrong X-Webhook-Hmac (401), records nothing', async () => {
      const session = await pairedSession('guarded');
      const before = (await svc.services.eventStore.readStream(msgSessionStreamId(session.id))).length;
      const body = JSON.stringify({ event: 'message', session: session.id, payload: { id: 'false_x@c.us_FORGED', from: 'x@c.us', fromMe: false, body: 'forged', timestamp: 1 } });
      const url = `${svc.baseUrl}/messaging/providers/waha/events`;
      const wrongKey = createHmac('sha512', 'not-the-key-not-the-key').update(body).digest('hex');
      for (const headers of [{}, { 'X-Webhook-Hmac': wrongKey }, { 'X-Webhook-Hmac': 'abc' }] as Array<Record<string, string>>) {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
        expect(res.status).to.equal(401);
        expect((await res.json()).error.code).to.equal('MESSAGING_WEBHOOK_SIGNATURE_INVALID');
      }
      expect((await svc.services.eventStore.readStream(msgSessionStreamId(session.id))).length).to.equal(before);
      // The right signature is accepted.
      const good = createHmac('sha512', HMAC_KEY).update(body).digest('hex');
      const ok = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Webhook-Hmac': good }, body });
      expect(ok.status).to.equal(200);
      expect(await ok.json()).to.deep.equal({ success: true, recorded: true });
      // Judged only once signed: a signed malformed event is a 400 naming the field.
      const malformed = JSON.stringify({ event: 'message', payload: {} });
      const sign = (text: string) => createHmac('sha512', HMAC_KEY).update(text).digest('hex');
      const bad = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Webhook-Hmac': sign(malformed) }, body: malformed });
      expect(bad.status).to.equal(400);
      expect(JSON.stringify(await bad.json())).to.include('body.session');
      const unsignedBad = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: malformed });
      expect(unsignedBad.status).to.equal(401);
      // An event for a session we do not have is acknowledged (WAHA would retry forever) and ignored.
      const stranger = JSON.stringify({ event: 'message', session: 'unknown-session', payload: { id: 'x', from: 'a@c.us', body: 'hi' } });
      const ignored = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Webhook-Hmac': sign(stranger) }, body: stranger });
      expect(await ignored.json()).to.deep.equal({ success: true, recorded: false });
    });

    it('delete stops and deletes the WAHA session; the session answers 404', async () => {
      const session = await pairedSession('leaving');
      const del = await client.api('DELETE', `/messaging/sessions/${session.id}`);
      expect(del.status, del.text).to.equal(200);
      expect(waha.requests.some((r) => r.method === 'POST' && r.path === `/api/sessions/${session.id}/stop`)).to.equal(true);
      expect(waha.requests.some((r) => r.method === 'DELETE' && r.path === `/api/sessions/${session.id}`)).to.equal(true);
      expect(waha.session(session.id)).to.equal(undefined);
      expectError(await client.api('GET', `/messaging/sessions/${session.id}/status`), 404, 'MESSAGING_SESSION_NOT_FOUND');
    });

    it('a WAHA server that cannot be reached leaves the session FAILED with the reason', async () => {
      const broken = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', MESSAGING_WAHA_URL: 'http://127.0.0.1:9', MESSAGING_WAHA_TIMEOUT_MS: '2000' });
      try {
        const user = await registerUser(broken.baseUrl);
        const res = await messagingClient(broken.baseUrl, user.auth).api('POST', '/messaging/sessions', { name: 'nowhere', provider: 'waha' });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.session.status).to.equal('FAILED');
        expect(res.body.session.reason).to.match(/WAHA/);
      } finally {
        await broken.stop();
      }
    });
  });
}
