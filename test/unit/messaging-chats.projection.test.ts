import { expect } from 'chai';
import type { ChatMessage, MessagingEvent } from '../../domain/messaging/index.js';
import { listChats, listGroups, listMessages } from '../../projections/messaging-chats.js';
import { messagingProjector } from '../../projections/messaging.js';
import { projectionSpec, type GivenEvent } from '../support/projection-spec.js';

const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;
const on = (event: MessagingEvent): GivenEvent => ({ streamId: 'msgsession-s1', event });
const message = (id: string, s: number, extra: Partial<ChatMessage> = {}): ChatMessage => ({
  id, chatId: 's2@embedded', from: 's2@embedded', to: 's1@embedded', text: `text ${id}`, timestamp: at(s), fromMe: false, replyTo: null, groupId: null, ...extra,
});
const received = (id: string, s: number, extra: Partial<ChatMessage> = {}) => on({ type: 'MessageReceived', data: { sessionId: 's1', message: { ...message(id, s, extra), fromMe: false }, at: at(s) } });
const sent = (id: string, s: number, extra: Partial<ChatMessage> = {}) =>
  on({ type: 'MessageSent', data: { sessionId: 's1', message: { ...message(id, s, { from: 's1@embedded', to: 's2@embedded', ...extra }), fromMe: true }, ack: 'PENDING', at: at(s) } });
const group = { id: 'g1@g.embedded', name: 'Friends', participants: ['s1@embedded', 's2@embedded'] };

const history: GivenEvent[] = [
  on({ type: 'MessagingSessionInitialized', data: { sessionId: 's1', name: 'one', provider: 'embedded', ownerId: 'u1', orgId: null, workspaceId: null, address: 's1@embedded', at: at(1) } }),
  received('m1', 2),
  received('m2', 3),
  sent('m3', 4),
  on({ type: 'MessageAckChanged', data: { sessionId: 's1', messageId: 'm3', chatId: 's2@embedded', ack: 'SERVER', previous: 'PENDING', at: at(5) } }),
  on({ type: 'MessageAckChanged', data: { sessionId: 's1', messageId: 'm3', chatId: 's2@embedded', ack: 'READ', previous: 'SERVER', at: at(6) } }),
  on({ type: 'MessagesMarkedRead', data: { sessionId: 's1', chatId: 's2@embedded', upToMessageId: 'm1', messages: [{ id: 'm1', from: 's2@embedded' }], at: at(7) } }),
  on({ type: 'MessagingGroupJoined', data: { sessionId: 's1', group, createdBy: 's2@embedded', at: at(8) } }),
  received('g-m1', 9, { chatId: group.id, to: group.id, groupId: group.id }),
];

describe('messaging chats, messages and groups projection', () => {
  it('keeps each chat with its last message and unread count, each message with its ack and read flag', async () => {
    await projectionSpec([messagingProjector])
      .given(history)
      .thenDocuments('messaging_chats', [
        { _id: 's1:g1@g.embedded', sessionId: 's1', chatId: group.id, isGroup: true, name: 'Friends', unreadCount: 1, lastMessageAt: at(9) },
        {
          _id: 's1:s2@embedded', chatId: 's2@embedded', isGroup: false, name: null, unreadCount: 1, lastMessageAt: at(4),
          lastMessage: { id: 'm3', text: 'text m3', fromMe: true, from: 's1@embedded', timestamp: at(4) },
        },
      ]);
    await projectionSpec([messagingProjector])
      .given(history)
      .thenDocuments('messaging_messages', [
        { _id: 's1:g-m1', chatId: group.id, groupId: group.id, ack: null, read: false },
        { _id: 's1:m1', chatId: 's2@embedded', ack: null, read: true, seq: 2 },
        { _id: 's1:m2', ack: null, read: false, seq: 3 },
        { _id: 's1:m3', fromMe: true, ack: 'READ', read: true, seq: 4 },
      ]);
    await projectionSpec([messagingProjector])
      .given(history)
      .thenDocuments('messaging_groups', [{ _id: 's1:g1@g.embedded', id: group.id, name: 'Friends', participants: group.participants, createdBy: 's2@embedded', createdAt: at(8) }]);
  });

  it('marks a whole chat read (also what the decider no longer tracks), and pages chats and messages newest first', async () => {
    await projectionSpec([messagingProjector])
      .given([...history, on({ type: 'MessagesMarkedRead', data: { sessionId: 's1', chatId: 's2@embedded', upToMessageId: null, messages: [], at: at(10) } })])
      .then(async (store) => {
        const chats = await listChats(store, 's1', 10, null);
        expect(chats.items.map((c) => [c.chatId, c.unreadCount])).to.deep.equal([[group.id, 1], ['s2@embedded', 0]]);
        const first = await listMessages(store, 's1', 's2@embedded', 2, null);
        expect(first.items.map((m) => [m.id, m.read])).to.deep.equal([['m3', true], ['m2', true]]);
        expect((await listMessages(store, 's1', 's2@embedded', 2, first.nextCursor)).items.map((m) => m.id)).to.deep.equal(['m1']);
        expect((await listGroups(store, 's1', 10, null)).items.map((g) => g.name)).to.deep.equal(['Friends']);
        expect((await listChats(store, 'other', 10, null)).items).to.deep.equal([]);
      });
  });
});
