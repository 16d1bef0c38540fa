import { expect } from 'chai';
import {
  messagingDecider,
  messagingEventSchemas,
  OPEN_ACKS_LIMIT,
  sessionIdOfAddress,
  UNREAD_TRACK_LIMIT,
  embeddedAddressOf,
  embeddedGroupIdOf,
  type ChatMessage,
  type MessagingCommand,
  type MessagingEvent,
} from '../../domain/messaging/index.js';
import { ackOf, receivedMessageOf, verifyWahaSignature, wahaInbound, wahaSignatureOf } from '../../infra/messaging/waha-inbound.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const spec = deciderSpec(messagingDecider);
/** Decide and fold, the way the handler does: the history grows with what was decided. */
function run(history: MessagingEvent[], ...commands: MessagingCommand[]): MessagingEvent[] {
  const all = [...history];
  for (const c of commands) all.push(...spec.given(all).when(c).events());
  return all;
}

const init: MessagingEvent = {
  type: 'MessagingSessionInitialized',
  data: { sessionId: 's1', name: 'one', provider: 'embedded', ownerId: 'u1', orgId: null, workspaceId: null, address: 's1@embedded', at },
};
const working = run([init], { type: 'ChangeStatus', status: 'STARTING', at }, { type: 'ChangeStatus', status: 'WORKING', me: { id: 's1@embedded' }, at });
const message = (id: string, extra: Partial<ChatMessage> = {}): ChatMessage => ({
  id,
  chatId: 's2@embedded',
  from: 's2@embedded',
  to: 's1@embedded',
  text: `text ${id}`,
  timestamp: at,
  fromMe: false,
  ...extra,
});

describe('messaging session decider', () => {
  it('records each status change with the previous one, once', () => {
    const statuses = working.filter((e) => e.type === 'MessagingSessionStatusChanged').map((e) => e.data);
    expect(statuses.map((d: any) => [d.previous, d.status])).to.deep.equal([
      ['STOPPED', 'STARTING'],
      ['STARTING', 'WORKING'],
    ]);
    spec.given(working).when({ type: 'ChangeStatus', status: 'WORKING', at }).then([]);
    spec.given(working).when({ type: 'ChangeStatus', status: 'WORKING', me: { id: 's1@embedded' }, at }).then([]);
    // A late answer for an older state is dropped.
    spec.given(working).when({ type: 'ChangeStatus', status: 'SCAN_QR_CODE', qr: 'x', onlyFrom: ['STARTING'], at }).then([]);
    spec.given([init]).when({ type: 'InitializeSession', ...init.data, at } as MessagingCommand).thenThrows('MESSAGING_SESSION_EXISTS', 'conflict');
  });

  it('a new QR while scanning is recorded, the same one is not', () => {
    const scanning = run([init], { type: 'ChangeStatus', status: 'SCAN_QR_CODE', qr: 'q1', at });
    spec.given(scanning).when({ type: 'ChangeStatus', status: 'SCAN_QR_CODE', qr: 'q1', at }).then([]);
    expect(spec.given(scanning).when({ type: 'ChangeStatus', status: 'SCAN_QR_CODE', qr: 'q2', at }).events()).to.have.length(1);
  });

  it('sends only while WORKING', () => {
    spec.given([init]).when({ type: 'RecordSent', message: message('m1', { fromMe: true }), at }).thenThrows('MESSAGING_SESSION_NOT_WORKING', 'conflict');
    const [sent] = spec.given(working).when({ type: 'RecordSent', message: message('m1', { fromMe: true }), at }).events();
    expect(sent).to.deep.include({ type: 'MessageSent' });
    expect((sent.data as any).ack).to.equal('PENDING');
  });

  it('acks only move forward and end at READ or ERROR; repeats decide nothing', () => {
    const sent = run(working, { type: 'RecordSent', message: message('m1', { fromMe: true, chatId: 's2@embedded' }), at });
    const server = run(sent, { type: 'ChangeAck', messageId: 'm1', ack: 'SERVER', at });
    expect(server.at(-1)!.data).to.include({ ack: 'SERVER', previous: 'PENDING', chatId: 's2@embedded' });
    spec.given(server).when({ type: 'ChangeAck', messageId: 'm1', ack: 'SERVER', at }).then([]);
    spec.given(server).when({ type: 'ChangeAck', messageId: 'm1', ack: 'PENDING', at }).then([]);
    const read = run(server, { type: 'ChangeAck', messageId: 'm1', ack: 'READ', at });
    expect(read.at(-1)!.data).to.include({ ack: 'READ', previous: 'SERVER' });
    spec.given(read).when({ type: 'ChangeAck', messageId: 'm1', ack: 'DEVICE', at }).then([]);
    spec.given(read).when({ type: 'ChangeAck', messageId: 'unknown', ack: 'READ', at }).then([]);
  });

  it('a redelivered message is received once; mark read covers all or up to an id', () => {
    const received = run(working, ...['a', 'b', 'c'].map((id) => ({ type: 'RecordReceived', message: message(id), at }) as MessagingCommand));
    expect(received.filter((e) => e.type === 'MessageReceived')).to.have.length(3);
    spec.given(received).when({ type: 'RecordReceived', message: message('b'), at }).then([]);
    const [upToB] = spec.given(received).when({ type: 'MarkRead', chatId: 's2@embedded', upToMessageId: 'b', at }).events();
    expect((upToB.data as any).messages.map((m: { id: string }) => m.id)).to.deep.equal(['a', 'b']);
    const after = [...received, upToB];
    expect(spec.stateOf(after).unread['s2@embedded'].map((m) => m.id)).to.deep.equal(['c']);
    spec.given(after).when({ type: 'MarkRead', chatId: 's2@embedded', upToMessageId: 'a', at }).then([]);
    const [all] = spec.given(after).when({ type: 'MarkRead', chatId: 's2@embedded', upToMessageId: null, at }).events();
    expect((all.data as any).messages).to.deep.equal([{ id: 'c', from: 's2@embedded' }]);
    // Still remembered after being read: a late redelivery is not a new unread message.
    spec.given([...after, all]).when({ type: 'RecordReceived', message: message('a'), at }).then([]);
  });

  it('joins a group once; delete stops the session and keeps refusing', () => {
    const group = { id: 'g1@g.embedded', name: 'G', participants: ['s1@embedded', 's2@embedded'] };
    const joined = run(working, { type: 'JoinGroup', group, createdBy: 's1@embedded', at });
    spec.given(joined).when({ type: 'JoinGroup', group, createdBy: 's1@embedded', at }).then([]);
    const deleted = run(joined, { type: 'DeleteSession', at });
    expect(deleted.slice(-2).map((e) => e.type)).to.deep.equal(['MessagingSessionStatusChanged', 'MessagingSessionDeleted']);
    expect(deleted.at(-2)!.data).to.include({ status: 'STOPPED', previous: 'WORKING' });
    spec.given(deleted).when({ type: 'DeleteSession', at }).thenThrows('MESSAGING_SESSION_NOT_FOUND', 'not_found');
    spec.given(deleted).when({ type: 'RecordReceived', message: message('late'), at }).then([]);
    spec.given([]).when({ type: 'ChangeStatus', status: 'WORKING', at }).thenThrows('MESSAGING_SESSION_NOT_FOUND', 'not_found');
  });

  it('caps what the state tracks: newest unread per chat, newest open acks', () => {
    let state = spec.stateOf(working);
    for (let i = 0; i < UNREAD_TRACK_LIMIT + 5; i++) {
      state = messagingDecider.evolve(state, { type: 'MessageReceived', data: { sessionId: 's1', message: { ...message(`r${i}`), fromMe: false }, at } });
    }
    expect(state.unread['s2@embedded']).to.have.length(UNREAD_TRACK_LIMIT);
    expect(state.unread['s2@embedded'][0].id).to.equal('r5');
    for (let i = 0; i < OPEN_ACKS_LIMIT + 3; i++) {
      state = messagingDecider.evolve(state, { type: 'MessageSent', data: { sessionId: 's1', message: { ...message(`s${i}`), fromMe: true }, ack: 'PENDING', at } });
    }
    expect(Object.keys(state.openAcks)).to.have.length(OPEN_ACKS_LIMIT);
    expect(state.openAcks.s2).to.equal(undefined);
    expect(state.openAcks[`s${OPEN_ACKS_LIMIT + 2}`]).to.deep.equal({ chatId: 's2@embedded', ack: 'PENDING' });
  });

  it('evolve never mutates the state it is given', () => {
    const state = Object.freeze(spec.stateOf(working));
    const next = messagingDecider.evolve(state, { type: 'MessageReceived', data: { sessionId: 's1', message: { ...message('z'), fromMe: false }, at } });
    expect(next).not.to.equal(state);
    expect(state.unread).to.deep.equal({});
  });

  it('every event the decider emits matches its schema (contract with the webhooks context)', () => {
    const history = run(
      working,
      { type: 'RecordSent', message: message('m1', { fromMe: true }), at },
      { type: 'ChangeAck', messageId: 'm1', ack: 'SERVER', at },
      { type: 'RecordReceived', message: message('r1'), at },
      { type: 'MarkRead', chatId: 's2@embedded', upToMessageId: null, at },
      { type: 'DeleteSession', at },
    );
    for (const e of history) expect(messagingEventSchemas[e.type].safeParse(e.data).success, e.type).to.equal(true);
  });
});

describe('messaging addresses and WAHA wire helpers', () => {
  it('resolves embedded addresses without a lookup', () => {
    expect(sessionIdOfAddress(embeddedAddressOf('abc-1'))).to.equal('abc-1');
    expect(sessionIdOfAddress(embeddedGroupIdOf('g'))).to.equal(null);
    expect(sessionIdOfAddress('123@c.us')).to.equal(null);
  });

  it('verifies X-Webhook-Hmac (hex HMAC-SHA512) in constant time', () => {
    const body = '{"event":"message"}';
    const key = 'k'.repeat(20);
    expect(verifyWahaSignature(body, key, wahaSignatureOf(body, key))).to.equal(true);
    expect(verifyWahaSignature(body, key, wahaSignatureOf(`${body} `, key))).to.equal(false);
    expect(verifyWahaSignature(body, key, undefined)).to.equal(false);
    expect(verifyWahaSignature(body, key, 'short')).to.equal(false);
  });

  it('reads WAHA events through the inbound port: signature, status with me, message, ack, and what it ignores', () => {
    const key = 'k'.repeat(20);
    const inbound = wahaInbound(key);
    const body = '{"event":"message"}';
    expect(inbound.verify(body, wahaSignatureOf(body, key))).to.equal(true);
    expect(inbound.verify(body, 'nope')).to.equal(false);
    expect(wahaInbound(undefined).verify(body, wahaSignatureOf(body, key))).to.equal(false);
    const now = new Date(at);
    expect(inbound.translate({ event: 'session.status', payload: { status: 'WORKING', me: { id: 'me@c.us', pushName: 'Me' } } }, null, now)).to.deep.equal({ type: 'status', status: 'WORKING', me: { id: 'me@c.us', pushName: 'Me' } });
    expect(inbound.translate({ event: 'session.status', payload: { status: 'WORKING' }, me: { id: 'me@c.us' } }, null, now)).to.deep.equal({ type: 'status', status: 'WORKING', me: { id: 'me@c.us' } });
    expect(inbound.translate({ event: 'session.status', payload: { status: 'SCAN_QR_CODE', me: { id: 'me@c.us' } } }, null, now)).to.deep.equal({ type: 'status', status: 'SCAN_QR_CODE' });
    expect(inbound.translate({ event: 'session.status', payload: { status: 'NOPE' } }, null, now)).to.equal(null);
    expect(inbound.translate({ event: 'message', payload: { id: 'x', from: 'a@c.us', body: 'hi' } }, 'me@c.us', now)).to.deep.include({ type: 'message' });
    expect(inbound.translate({ event: 'message', payload: { id: 'x', from: 'a@c.us', fromMe: true } }, 'me@c.us', now)).to.equal(null);
    expect(inbound.translate({ event: 'message.ack', payload: { id: { _serialized: 'm1' }, ack: 3 } }, null, now)).to.deep.equal({ type: 'ack', messageId: 'm1', ack: 'READ' });
    expect(inbound.translate({ event: 'message.ack', payload: { ack: 3 } }, null, now)).to.equal(null);
    expect(inbound.translate({ event: 'presence.update', payload: {} }, null, now)).to.equal(null);
  });

  it("maps WAHA's acks and messages", () => {
    expect(ackOf({ ack: 1 })).to.equal('SERVER');
    expect(ackOf({ ack: 4 })).to.equal('READ');
    expect(ackOf({ ack: -1 })).to.equal('ERROR');
    expect(ackOf({ ackName: 'DEVICE', ack: 0 })).to.equal('DEVICE');
    expect(ackOf({})).to.equal(null);
    const now = new Date(at);
    expect(receivedMessageOf({ id: 'x', from: 'a@c.us', fromMe: true, body: 'mine' }, null, now)).to.equal(null);
    const group = receivedMessageOf({ id: { _serialized: 'y' }, from: 'g@g.us', participant: 'p@c.us', body: 'hi', timestamp: 1767225600, replyTo: { id: 'q' } }, 'me@c.us', now)!;
    expect(group).to.deep.equal({ id: 'y', chatId: 'g@g.us', from: 'p@c.us', to: 'me@c.us', text: 'hi', timestamp: '2026-01-01T00:00:00.000Z', fromMe: false, replyTo: 'q', groupId: 'g@g.us' });
  });
});
