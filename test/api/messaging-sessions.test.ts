import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { msgSessionStreamId } from '../../domain/messaging/index.js';
import { messagingClient } from '../support/messaging-client.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { expectError, fields } from './orgs-support.js';

for (const mode of availableModes()) {
  describe(`Messaging sessions, embedded network (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    let client: ReturnType<typeof messagingClient>;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
      client = messagingClient(svc.baseUrl, owner.auth);
    });
    after(async () => svc?.stop());
    const uniqueName = (prefix: string) => `${prefix} ${randomUUID().slice(0, 8)}`;

    it('initialises an embedded session that pairs at once: STOPPED → STARTING → WORKING, each recorded', async () => {
      const session = await client.createSession(uniqueName('Alice'));
      expect(session.status).to.equal('WORKING');
      expect(session.address).to.equal(`${session.id}@embedded`);
      expect(session.me?.id).to.equal(session.address);
      const events = await svc.services.eventStore.readStream(msgSessionStreamId(session.id));
      const statuses = events.filter((e) => e.type === 'MessagingSessionStatusChanged').map((e) => `${(e.data as any).previous}→${(e.data as any).status}`);
      expect(events[0].type).to.equal('MessagingSessionInitialized');
      expect(statuses).to.deep.equal(['STOPPED→STARTING', 'STARTING→WORKING']);
      const status = await client.api('GET', `/messaging/sessions/${session.id}/status`);
      expect(status.status, status.text).to.equal(200);
      expect(status.body.status).to.include({ sessionId: session.id, status: 'WORKING', qr: null });
      expect(status.body.status.me.id).to.equal(session.address);
      expect(status.body.status.lastChangeAt).to.be.a('string');
    });

    it('two sessions exchange messages: chat + message at B, ack PENDING → SERVER → DEVICE at A, READ after B marks read', async () => {
      const a = await client.createSession(uniqueName('A'));
      const b = await client.createSession(uniqueName('B'));
      const sent = await client.send(a.id, b.address, 'hello B');
      expect(sent.ack).to.equal('PENDING');
      await client.waitForAck(a.id, b.address, sent.id, 'DEVICE');
      const received = await client.waitForMessage(b.id, a.address, sent.id);
      expect(received).to.include({ text: 'hello B', fromMe: false, from: a.address, ack: null, read: false });
      const chats = await client.chats(b.id);
      const chat = chats.items.find((c) => c.id === a.address)!;
      expect(chat).to.include({ unreadCount: 1, isGroup: false });
      expect(chat.lastMessage).to.include({ id: sent.id, text: 'hello B' });

      // A's acks, in order, each an event on A's stream.
      const acks = (await svc.services.eventStore.readStream(msgSessionStreamId(a.id))).filter((e) => e.type === 'MessageAckChanged').map((e) => (e.data as any).ack);
      expect(acks).to.deep.equal(['SERVER', 'DEVICE']);

      // B replies, quoting A's message.
      const reply = await client.send(b.id, a.address, 'hi A', sent.id);
      const atA = await client.waitForMessage(a.id, b.address, reply.id);
      expect(atA).to.include({ replyTo: sent.id, fromMe: false });

      const read = await client.api('POST', `/messaging/sessions/${b.id}/chats/${a.address}/read`, { all: true });
      expect(read.status, read.text).to.equal(200);
      expect(read.body.marked).to.equal(1);
      await client.waitForAck(a.id, b.address, sent.id, 'READ');
      expect((await client.chats(b.id)).items.find((c) => c.id === a.address)!.unreadCount).to.equal(0);
      // Marking again covers nothing and appends nothing.
      const again = await client.api('POST', `/messaging/sessions/${b.id}/chats/${a.address}/read`, {});
      expect(again.body.marked).to.equal(0);
    });

    it('marks read up to a message id only', async () => {
      const a = await client.createSession(uniqueName('A'));
      const b = await client.createSession(uniqueName('B'));
      const m1 = await client.send(a.id, b.address, 'one');
      const m2 = await client.send(a.id, b.address, 'two');
      const m3 = await client.send(a.id, b.address, 'three');
      await client.waitForMessage(b.id, a.address, m3.id);
      const res = await client.api('POST', `/messaging/sessions/${b.id}/chats/${a.address}/read`, { upToMessageId: m2.id });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.marked).to.equal(2);
      await client.waitForAck(a.id, b.address, m1.id, 'READ');
      await client.waitForAck(a.id, b.address, m2.id, 'READ');
      const atA = await client.messages(a.id, b.address);
      expect(atA.items.find((m) => m.id === m3.id)!.ack).to.equal('DEVICE');
      expect((await client.chats(b.id)).items.find((c) => c.id === a.address)!.unreadCount).to.equal(1);
      const unknown = await client.api('POST', `/messaging/sessions/${b.id}/chats/${a.address}/read`, { upToMessageId: 'nope' });
      expectError(unknown, 404, 'MESSAGING_MESSAGE_NOT_FOUND');
      const both = await client.api('POST', `/messaging/sessions/${b.id}/chats/${a.address}/read`, { all: true, upToMessageId: m3.id });
      expectError(both, 400);
      expect(fields(both)).to.include('body.upToMessageId');
    });

    it('groups: created with participants, known to each, a message reaches every other participant', async () => {
      const a = await client.createSession(uniqueName('A'));
      const b = await client.createSession(uniqueName('B'));
      const c = await client.createSession(uniqueName('C'));
      const created = await client.api('POST', `/messaging/sessions/${a.id}/groups`, { name: 'Team', participants: [b.address, c.address] });
      expect(created.status, created.text).to.equal(201);
      const group = created.body.group;
      expect(group.id).to.match(/@g\.embedded$/);
      expect(group.participants).to.have.members([a.address, b.address, c.address]);
      for (const s of [b, c]) {
        await waitUntil('group shared', async () => {
          const res = await client.api('GET', `/messaging/sessions/${s.id}/groups`);
          return res.body.items?.find((g: { id: string }) => g.id === group.id);
        });
      }
      const listed = await client.api('GET', `/messaging/sessions/${a.id}/groups`);
      expect(listed.body.items).to.deep.equal([{ id: group.id, name: 'Team', participants: group.participants }]);
      const sent = await client.send(b.id, group.id, 'hello team');
      for (const s of [a, c]) {
        const m = await client.waitForMessage(s.id, group.id, sent.id);
        expect(m).to.include({ from: b.address, groupId: group.id, text: 'hello team' });
      }
      await client.waitForAck(b.id, group.id, sent.id, 'DEVICE');
      const chat = (await client.chats(c.id)).items.find((x) => x.id === group.id)!;
      expect(chat).to.include({ isGroup: true, name: 'Team', unreadCount: 1 });
      const outsider = await client.createSession(uniqueName('D'));
      const refused = await client.api('POST', `/messaging/sessions/${outsider.id}/messages`, { chatId: group.id, text: 'let me in' });
      expectError(refused, 404, 'MESSAGING_CHAT_NOT_FOUND');
    });

    it('a message to an address no session has ends in ack ERROR', async () => {
      const a = await client.createSession(uniqueName('A'));
      const sent = await client.send(a.id, `${randomUUID()}@embedded`, 'anyone?');
      expect(sent.ack).to.equal('PENDING');
      await client.waitForAck(a.id, sent.chatId, sent.id, 'ERROR');
    });

    it('paginates sessions, chats and messages (newest first)', async () => {
      const user = await registerUser(svc.baseUrl);
      const mine = messagingClient(svc.baseUrl, user.auth);
      const hub = await mine.createSession('hub');
      const peers = [];
      for (let i = 0; i < 3; i++) peers.push(await mine.createSession(`peer ${i}`));
      const sessions1 = await mine.api('GET', '/messaging/sessions?limit=3');
      expect(sessions1.status, sessions1.text).to.equal(200);
      expect(sessions1.body.items).to.have.length(3);
      const sessions2 = await mine.api('GET', `/messaging/sessions?limit=3&cursor=${encodeURIComponent(sessions1.body.nextCursor)}`);
      expect(sessions2.body.items).to.have.length(1);
      expect(sessions2.body.nextCursor).to.equal(null);
      expect([...sessions1.body.items, ...sessions2.body.items].map((s: { name: string }) => s.name)).to.deep.equal(['peer 2', 'peer 1', 'peer 0', 'hub']);

      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await mine.send(hub.id, peers[0].address, `m${i}`)).id);
      const page1 = await mine.messages(hub.id, peers[0].address, '?limit=2');
      expect(page1.items.map((m) => m.text)).to.deep.equal(['m4', 'm3']);
      const page2 = await mine.messages(hub.id, peers[0].address, `?limit=2&cursor=${encodeURIComponent(page1.nextCursor!)}`);
      const page3 = await mine.messages(hub.id, peers[0].address, `?limit=2&cursor=${encodeURIComponent(page2.nextCursor!)}`);
      expect([...page2.items, ...page3.items].map((m) => m.text)).to.deep.equal(['m2', 'm1', 'm0']);
      expect(page3.nextCursor).to.equal(null);

      await mine.send(hub.id, peers[1].address, 'to 1');
      await mine.send(hub.id, peers[2].address, 'to 2');
      const chats1 = await mine.chats(hub.id, '?limit=2');
      expect(chats1.items.map((c) => c.id)).to.deep.equal([peers[2].address, peers[1].address]);
      const chats2 = await mine.chats(hub.id, `?limit=2&cursor=${encodeURIComponent(chats1.nextCursor!)}`);
      expect(chats2.items.map((c) => c.id)).to.deep.equal([peers[0].address]);
    });

    it("another tenant's session answers 404 on every operation; no credentials 401", async () => {
      const a = await client.createSession(uniqueName('private'));
      const theirs = other.auth;
      const paths: Array<[string, string, unknown?]> = [
        ['GET', `/messaging/sessions/${a.id}/status`],
        ['GET', `/messaging/sessions/${a.id}/chats`],
        ['GET', `/messaging/sessions/${a.id}/chats/${a.address}/messages`],
        ['POST', `/messaging/sessions/${a.id}/messages`, { chatId: a.address, text: 'x' }],
        ['POST', `/messaging/sessions/${a.id}/chats/${a.address}/read`, {}],
        ['GET', `/messaging/sessions/${a.id}/groups`],
        ['POST', `/messaging/sessions/${a.id}/groups`, { name: 'g', participants: [a.address] }],
        ['DELETE', `/messaging/sessions/${a.id}`],
      ];
      for (const [method, path, body] of paths) {
        expectError(await client.api(method, path, body, theirs), 404, 'MESSAGING_SESSION_NOT_FOUND');
        expectError(await client.api(method, path, body, {}), 401);
      }
      const list = await client.api('GET', '/messaging/sessions', undefined, theirs);
      expect(list.body.items.map((s: { id: string }) => s.id)).not.to.include(a.id);
    });

    it('refuses bad input with 400 naming the field, duplicate names with 409', async () => {
      const bad: Array<[string, unknown, string]> = [
        ['/messaging/sessions', { name: '' }, 'body.name'],
        ['/messaging/sessions', { name: 'x', provider: 'telegram' }, 'body.provider'],
        ['/messaging/sessions', { name: 'x', extra: 1 }, 'body'],
      ];
      for (const [path, body, field] of bad) {
        const res = await client.api('POST', path, body);
        expectError(res, 400);
        expect(JSON.stringify(res.body.error), res.text).to.include(field);
      }
      const noWaha = await client.api('POST', '/messaging/sessions', { name: uniqueName('w'), provider: 'waha' });
      expectError(noWaha, 400, 'MESSAGING_PROVIDER_UNAVAILABLE');
      const a = await client.createSession(uniqueName('A'));
      for (const [body, field] of [
        [{ chatId: 'not a chat', text: 'x' }, 'body.chatId'],
        [{ chatId: a.address, text: '' }, 'body.text'],
        [{ chatId: a.address }, 'body.text'],
      ] as Array<[unknown, string]>) {
        const res = await client.api('POST', `/messaging/sessions/${a.id}/messages`, body);
        expectError(res, 400);
        expect(fields(res), res.text).to.include(field);
      }
      expectError(await client.api('POST', `/messaging/sessions/${a.id}/messages`, { chatId: 'someone@c.us', text: 'x' }), 400, 'MESSAGING_INVALID_CHAT_ID');
      expectError(await client.api('GET', `/messaging/sessions/${a.id}/chats?limit=0`), 400);
      expectError(await client.api('GET', `/messaging/sessions/${a.id}/chats?cursor=garbage`), 400);
      const name = uniqueName('dup');
      await client.createSession(name);
      expectError(await client.api('POST', '/messaging/sessions', { name: name.toUpperCase() }), 409, 'MESSAGING_SESSION_NAME_TAKEN');
      // Another owner may use the same name.
      expect((await client.api('POST', '/messaging/sessions', { name }, other.auth)).status).to.equal(201);
    });

    it('delete disconnects: 404 afterwards, history kept, messages to it fail, the name is free again', async () => {
      const name = uniqueName('gone');
      const a = await client.createSession(name);
      const b = await client.createSession(uniqueName('B'));
      const del = await client.api('DELETE', `/messaging/sessions/${a.id}`);
      expect(del.status, del.text).to.equal(200);
      expectError(await client.api('GET', `/messaging/sessions/${a.id}/status`), 404, 'MESSAGING_SESSION_NOT_FOUND');
      expectError(await client.api('DELETE', `/messaging/sessions/${a.id}`), 404, 'MESSAGING_SESSION_NOT_FOUND');
      const events = (await svc.services.eventStore.readStream(msgSessionStreamId(a.id))).map((e) => e.type);
      expect(events.slice(-2)).to.deep.equal(['MessagingSessionStatusChanged', 'MessagingSessionDeleted']);
      expect(events[0]).to.equal('MessagingSessionInitialized');
      const list = await client.api('GET', '/messaging/sessions?limit=100');
      expect(list.body.items.map((s: { id: string }) => s.id)).not.to.include(a.id);
      const sent = await client.send(b.id, a.address, 'still there?');
      await client.waitForAck(b.id, a.address, sent.id, 'ERROR');
      expect((await client.api('POST', '/messaging/sessions', { name })).status).to.equal(201);
    });
  });
}
