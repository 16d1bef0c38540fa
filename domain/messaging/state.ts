import type { Ack, ChatGroup, MessagingEvent, ProviderKind, SessionStatus } from './events.js';

/** How many received message ids a session remembers to drop a redelivered one (beyond the unread ones). */
export const RECENT_RECEIVED_LIMIT = 1000;
/**
 * State is copied on every event (evolve never mutates), so what it tracks per session is capped:
 * the newest unread messages per chat (older ones get no read receipt) and the newest sent
 * messages whose ack can still move (older ones keep their last ack).
 */
export const UNREAD_TRACK_LIMIT = 1000;
export const OPEN_ACKS_LIMIT = 2000;

export interface MessagingSessionState {
  exists: boolean;
  deleted: boolean;
  sessionId: string | null;
  name: string | null;
  provider: ProviderKind;
  ownerId: string | null;
  orgId: string | null;
  workspaceId: string | null;
  address: string | null;
  providerSessionName: string | null;
  pushName: string | null;
  status: SessionStatus;
  me: { id: string; pushName?: string } | null;
  qr: string | null;
  /** Groups this session belongs to, by chat id. */
  groups: Record<string, ChatGroup>;
  /** Messages this session sent whose ack can still move (not READ nor ERROR yet). */
  openAcks: Record<string, { chatId: string; ack: Ack }>;
  /** Received messages not read yet, per chat, oldest first. */
  unread: Record<string, Array<{ id: string; from: string }>>;
  /** The last received message ids (bounded): a redelivered MessageReceived is recognised and dropped. */
  recentReceived: string[];
}

export const initialSessionState: MessagingSessionState = {
  exists: false,
  deleted: false,
  sessionId: null,
  name: null,
  provider: 'embedded',
  ownerId: null,
  orgId: null,
  workspaceId: null,
  address: null,
  providerSessionName: null,
  pushName: null,
  status: 'STOPPED',
  me: null,
  qr: null,
  groups: {},
  openAcks: {},
  unread: {},
  recentReceived: [],
};

const ACK_RANK: Record<Ack, number> = { PENDING: 0, SERVER: 1, DEVICE: 2, READ: 3, ERROR: 4 };
/** Acks only move forward; READ and ERROR are final. */
export const ackMovesForward = (from: Ack, to: Ack) => from !== 'READ' && from !== 'ERROR' && ACK_RANK[to] > ACK_RANK[from];

const without = <T>(record: Record<string, T>, key: string) => {
  const { [key]: _dropped, ...rest } = record;
  return rest;
};

/** Pure: returns a new state, never mutates (the command handler caches folded states). */
export function evolveSession(state: MessagingSessionState, event: MessagingEvent): MessagingSessionState {
  switch (event.type) {
    case 'MessagingSessionInitialized': {
      const d = event.data;
      return {
        ...initialSessionState,
        exists: true,
        sessionId: d.sessionId,
        name: d.name,
        provider: d.provider,
        ownerId: d.ownerId,
        orgId: d.orgId,
        workspaceId: d.workspaceId,
        address: d.address ?? null,
        providerSessionName: d.providerSessionName ?? null,
        pushName: d.pushName ?? null,
      };
    }
    case 'MessagingSessionStatusChanged':
      return { ...state, status: event.data.status, me: event.data.me ?? state.me, qr: event.data.status === 'SCAN_QR_CODE' ? (event.data.qr ?? null) : null };
    case 'MessageSent': {
      const m = event.data.message;
      const openAcks = { ...state.openAcks, [m.id]: { chatId: m.chatId, ack: 'PENDING' as Ack } };
      const keys = Object.keys(openAcks);
      // Insertion order is sending order: drop the oldest beyond the cap.
      for (let i = 0; i < keys.length - OPEN_ACKS_LIMIT; i++) delete openAcks[keys[i]];
      return { ...state, openAcks };
    }
    case 'MessageAckChanged': {
      const { messageId, ack } = event.data;
      const open = state.openAcks[messageId];
      if (!open) return state;
      if (ack === 'READ' || ack === 'ERROR') return { ...state, openAcks: without(state.openAcks, messageId) };
      return { ...state, openAcks: { ...state.openAcks, [messageId]: { ...open, ack } } };
    }
    case 'MessageReceived': {
      const m = event.data.message;
      const recent = [...state.recentReceived, m.id];
      if (recent.length > RECENT_RECEIVED_LIMIT) recent.splice(0, recent.length - RECENT_RECEIVED_LIMIT);
      const chatUnread = [...(state.unread[m.chatId] ?? []), { id: m.id, from: m.from }];
      if (chatUnread.length > UNREAD_TRACK_LIMIT) chatUnread.splice(0, chatUnread.length - UNREAD_TRACK_LIMIT);
      return { ...state, recentReceived: recent, unread: { ...state.unread, [m.chatId]: chatUnread } };
    }
    case 'MessagesMarkedRead': {
      const read = new Set(event.data.messages.map((m) => m.id));
      const left = (state.unread[event.data.chatId] ?? []).filter((m) => !read.has(m.id));
      return { ...state, unread: left.length ? { ...state.unread, [event.data.chatId]: left } : without(state.unread, event.data.chatId) };
    }
    case 'MessagingGroupJoined':
      return { ...state, groups: { ...state.groups, [event.data.group.id]: event.data.group } };
    case 'MessagingSessionDeleted':
      return { ...state, deleted: true, status: 'STOPPED' };
    default:
      return state;
  }
}

/** Whether a session was already given this received message (unread or among the recent ones). */
export function alreadyReceived(state: MessagingSessionState, messageId: string, chatId: string): boolean {
  return state.recentReceived.includes(messageId) || (state.unread[chatId] ?? []).some((m) => m.id === messageId);
}

/** The unread received messages of a chat that marking as read covers: all, or up to and including one id. */
export function coveredUnread(state: MessagingSessionState, chatId: string, upToMessageId: string | null): Array<{ id: string; from: string }> {
  const unread = state.unread[chatId] ?? [];
  if (upToMessageId === null) return unread;
  const index = unread.findIndex((m) => m.id === upToMessageId);
  // Not among the unread ones: already read (or never received), nothing left to mark.
  return index === -1 ? [] : unread.slice(0, index + 1);
}
