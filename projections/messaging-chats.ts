import type { Ack, ChatMessage, MessagingEvent } from '../domain/messaging/events.js';
import { isEmbeddedGroupId } from '../domain/messaging/addresses.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, Page, ReadStore } from '../ports/read-store.js';

export const CHATS = 'messaging_chats';
export const MESSAGES = 'messaging_messages';
export const GROUPS = 'messaging_groups';

export interface MessageView extends Doc {
  sessionId: string;
  id: string;
  chatId: string;
  from: string;
  to: string;
  text: string;
  timestamp: string;
  fromMe: boolean;
  replyTo: string | null;
  groupId: string | null;
  /** Delivery state of a message this session sent; null for received ones. */
  ack: Ack | null;
  /** Whether this session read a received message (always true for its own). */
  read: boolean;
  /** Global log position: orders a chat's messages. */
  seq: number;
  ackVersion: number;
}

export interface ChatView extends Doc {
  sessionId: string;
  chatId: string;
  isGroup: boolean;
  name: string | null;
  lastMessage: { id: string; text: string; fromMe: boolean; from: string; timestamp: string } | null;
  lastMessageAt: string;
  unreadCount: number;
  version: number;
}

export interface GroupView extends Doc {
  sessionId: string;
  id: string;
  name: string;
  participants: string[];
  createdBy: string;
  createdAt: string;
}

const keyOf = (sessionId: string, id: string) => `${sessionId}:${id}`;

/** Chats are keyed per session; `version` (the session stream's revision) makes a replayed event a no-op. */
async function touchChat(store: ReadStore, sessionId: string, revision: number, message: ChatMessage, unreadDelta: number, groupName?: string | null) {
  const chats = store.collection<ChatView>(CHATS);
  const _id = keyOf(sessionId, message.chatId);
  const existing = await chats.findOne({ _id });
  if (existing && existing.version >= revision) return;
  const lastMessage = { id: message.id, text: message.text, fromMe: message.fromMe, from: message.from, timestamp: message.timestamp };
  if (!existing) {
    await chats.insertOne({
      _id,
      sessionId,
      chatId: message.chatId,
      isGroup: Boolean(message.groupId) || isEmbeddedGroupId(message.chatId),
      name: groupName ?? null,
      lastMessage,
      lastMessageAt: message.timestamp,
      unreadCount: Math.max(0, unreadDelta),
      version: revision,
    });
    return;
  }
  await chats.updateOne({ _id, version: { $lt: revision } }, { $set: { lastMessage, lastMessageAt: message.timestamp, version: revision }, $inc: { unreadCount: unreadDelta } });
}

export async function projectChatsAndMessages(recorded: RecordedEvent, event: MessagingEvent, sessionId: string, store: ReadStore): Promise<void> {
  const messages = store.collection<MessageView>(MESSAGES);
  switch (event.type) {
    case 'MessageSent':
    case 'MessageReceived': {
      const m = event.data.message;
      const sent = event.type === 'MessageSent';
      // The chat first, then the message: whoever sees the message (a reader polling for it) sees
      // its chat updated too. Both writes are replay-safe (chat by version, message by id).
      const group = m.groupId ? await store.collection<GroupView>(GROUPS).findOne({ _id: keyOf(sessionId, m.groupId) }) : null;
      await touchChat(store, sessionId, recorded.revision, m, sent ? 0 : 1, group?.name ?? null);
      await messages.replaceOne(
        { _id: keyOf(sessionId, m.id) },
        {
          _id: keyOf(sessionId, m.id),
          sessionId,
          id: m.id,
          chatId: m.chatId,
          from: m.from,
          to: m.to,
          text: m.text,
          timestamp: m.timestamp,
          fromMe: m.fromMe,
          replyTo: m.replyTo ?? null,
          groupId: m.groupId ?? null,
          ack: sent ? 'PENDING' : null,
          read: sent,
          seq: recorded.position,
          ackVersion: recorded.revision,
        },
        { upsert: true },
      );
      return;
    }
    case 'MessageAckChanged':
      await messages.updateOne(
        { _id: keyOf(sessionId, event.data.messageId), ackVersion: { $lt: recorded.revision } },
        { $set: { ack: event.data.ack, ackVersion: recorded.revision } },
      );
      return;
    case 'MessagesMarkedRead': {
      const chats = store.collection<ChatView>(CHATS);
      const _id = keyOf(sessionId, event.data.chatId);
      const chatFilter = { sessionId, chatId: event.data.chatId, fromMe: false, read: false };
      // "All" covers every received message so far, also those beyond the decider's unread cap.
      if (event.data.upToMessageId === null) await messages.updateMany({ ...chatFilter, seq: { $lt: recorded.position } }, { $set: { read: true } });
      else await messages.updateMany({ _id: { $in: event.data.messages.map((m) => keyOf(sessionId, m.id)) } }, { $set: { read: true } });
      // Counted, not decremented: absolute, so a replayed event cannot drift it.
      const unreadCount = await messages.count(chatFilter);
      await chats.updateOne({ _id, version: { $lt: recorded.revision } }, { $set: { unreadCount, version: recorded.revision } });
      return;
    }
    case 'MessagingGroupJoined': {
      const g = event.data.group;
      await store.collection<GroupView>(GROUPS).replaceOne(
        { _id: keyOf(sessionId, g.id) },
        { _id: keyOf(sessionId, g.id), sessionId, id: g.id, name: g.name, participants: g.participants, createdBy: event.data.createdBy, createdAt: event.data.at },
        { upsert: true },
      );
      await store.collection<ChatView>(CHATS).updateOne({ _id: keyOf(sessionId, g.id) }, { $set: { name: g.name } });
      return;
    }
    default:
      return;
  }
}

/** A session's chats, most recent message first. Callers check the session's tenancy first. */
export function listChats(store: ReadStore, sessionId: string, limit: number, cursor: string | null): Promise<Page<ChatView>> {
  return store.collection<ChatView>(CHATS).page({ sessionId }, { sort: { lastMessageAt: -1 }, limit, cursor });
}

/** A chat's messages, newest first. */
export function listMessages(store: ReadStore, sessionId: string, chatId: string, limit: number, cursor: string | null): Promise<Page<MessageView>> {
  return store.collection<MessageView>(MESSAGES).page({ sessionId, chatId }, { sort: { seq: -1 }, limit, cursor });
}

export function getMessage(store: ReadStore, sessionId: string, messageId: string): Promise<MessageView | null> {
  return store.collection<MessageView>(MESSAGES).findOne({ _id: keyOf(sessionId, messageId) });
}

export function listGroups(store: ReadStore, sessionId: string, limit: number, cursor: string | null): Promise<Page<GroupView>> {
  return store.collection<GroupView>(GROUPS).page({ sessionId }, { sort: { createdAt: -1 }, limit, cursor });
}
