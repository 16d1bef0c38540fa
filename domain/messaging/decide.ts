import { DomainError } from '../shared/decider.js';
import type { Ack, ChatGroup, ChatMessage, MessagingEvent, ProviderKind, SessionStatus } from './events.js';
import { ackMovesForward, alreadyReceived, coveredUnread, type MessagingSessionState } from './state.js';

export type MessagingCommand =
  | {
      type: 'InitializeSession';
      sessionId: string;
      name: string;
      provider: ProviderKind;
      ownerId: string;
      orgId: string | null;
      workspaceId: string | null;
      address?: string;
      providerSessionName?: string;
      pushName?: string;
      at: string;
    }
  | {
      type: 'ChangeStatus';
      status: SessionStatus;
      reason?: string;
      me?: { id: string; pushName?: string };
      qr?: string;
      /** Apply only while the session is in one of these statuses (a late provider answer must not undo a newer webhook). */
      onlyFrom?: SessionStatus[];
      at: string;
    }
  | { type: 'RecordSent'; message: ChatMessage; at: string }
  | { type: 'RecordReceived'; message: ChatMessage; at: string }
  | { type: 'ChangeAck'; messageId: string; ack: Ack; at: string }
  | { type: 'MarkRead'; chatId: string; upToMessageId: string | null; at: string }
  | { type: 'JoinGroup'; group: ChatGroup; createdBy: string; at: string }
  | { type: 'DeleteSession'; at: string };

export const sessionNotFound = () => new DomainError('MESSAGING_SESSION_NOT_FOUND', 'messaging session not found', 'not_found');
export const notWorking = (status: SessionStatus) =>
  new DomainError('MESSAGING_SESSION_NOT_WORKING', `the session is ${status}; it must be WORKING to do this`, 'conflict', { status });

/**
 * The session aggregate's decisions. Commands coming from the network (RecordReceived, ChangeAck, JoinGroup)
 * are idempotent: the bus delivers at least once, so a repeat decides nothing.
 */
export function decideSession(command: MessagingCommand, state: MessagingSessionState): MessagingEvent[] {
  if (command.type === 'InitializeSession') {
    if (state.exists) throw new DomainError('MESSAGING_SESSION_EXISTS', 'session already exists', 'conflict');
    const { type: _t, ...data } = command;
    return [{ type: 'MessagingSessionInitialized', data }];
  }
  if (!state.exists) throw sessionNotFound();
  const sessionId = state.sessionId!;
  switch (command.type) {
    case 'ChangeStatus': {
      if (state.deleted) return [];
      if (command.onlyFrom && !command.onlyFrom.includes(state.status)) return [];
      // The same news twice (our own poll and the provider's webhook) is recorded once.
      const sameQr = command.qr === undefined || command.qr === state.qr;
      const sameMe = command.me === undefined || (state.me !== null && command.me.id === state.me.id && command.me.pushName === state.me.pushName);
      if (command.status === state.status && sameQr && sameMe) return [];
      return [
        {
          type: 'MessagingSessionStatusChanged',
          data: {
            sessionId,
            status: command.status,
            previous: state.status,
            ...(command.reason !== undefined ? { reason: command.reason } : {}),
            ...(command.me !== undefined ? { me: command.me } : {}),
            ...(command.qr !== undefined ? { qr: command.qr } : {}),
            at: command.at,
          },
        },
      ];
    }
    case 'RecordSent':
      if (state.deleted) throw sessionNotFound();
      if (state.status !== 'WORKING') throw notWorking(state.status);
      return [{ type: 'MessageSent', data: { sessionId, message: { ...command.message, fromMe: true }, ack: 'PENDING', at: command.at } }];
    case 'RecordReceived':
      if (state.deleted || alreadyReceived(state, command.message.id, command.message.chatId)) return [];
      return [{ type: 'MessageReceived', data: { sessionId, message: { ...command.message, fromMe: false }, at: command.at } }];
    case 'ChangeAck': {
      const open = state.openAcks[command.messageId];
      if (!open || !ackMovesForward(open.ack, command.ack)) return [];
      return [
        {
          type: 'MessageAckChanged',
          data: { sessionId, messageId: command.messageId, chatId: open.chatId, ack: command.ack, previous: open.ack, at: command.at },
        },
      ];
    }
    case 'MarkRead': {
      if (state.deleted) throw sessionNotFound();
      const covered = coveredUnread(state, command.chatId, command.upToMessageId);
      if (covered.length === 0) return [];
      return [
        {
          type: 'MessagesMarkedRead',
          data: { sessionId, chatId: command.chatId, upToMessageId: command.upToMessageId, messages: covered.map((m) => ({ id: m.id, from: m.from })), at: command.at },
        },
      ];
    }
    case 'JoinGroup': {
      if (state.deleted) return [];
      const known = state.groups[command.group.id];
      if (known && known.name === command.group.name && known.participants.join() === command.group.participants.join()) return [];
      return [{ type: 'MessagingGroupJoined', data: { sessionId, group: command.group, createdBy: command.createdBy, at: command.at } }];
    }
    case 'DeleteSession': {
      if (state.deleted) throw sessionNotFound();
      const events: MessagingEvent[] = [];
      if (state.status !== 'STOPPED') {
        events.push({ type: 'MessagingSessionStatusChanged', data: { sessionId, status: 'STOPPED', previous: state.status, reason: 'deleted', at: command.at } });
      }
      events.push({ type: 'MessagingSessionDeleted', data: { sessionId, at: command.at } });
      return events;
    }
  }
}
