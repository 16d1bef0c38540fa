import { z } from 'zod';
import { createGroup, markChatRead, sendMessage } from '../../commands/messaging-chats.js';
import { loadSession, providerRefOf } from '../../commands/messaging.js';
import { msgSessionStreamId } from '../../domain/messaging/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { getMessage, listChats, listGroups, listMessages, type ChatView, type GroupView, type MessageView } from '../../projections/messaging.js';
import { providerFailure } from '../../commands/messaging-chats.js';
import { defineRoute } from '../route.js';
import { auth, callerSession, chatIdSchema, chatParams, errors, notWorkingError, providerError, sessionParams, tag } from './messaging-support.js';
import { pageQuery, pageReply } from './pagination.js';

const ackEnum = z.enum(['PENDING', 'SERVER', 'DEVICE', 'READ', 'ERROR']);
const messageOut = z.object({
  id: z.string(),
  chatId: z.string(),
  from: z.string(),
  to: z.string(),
  text: z.string(),
  timestamp: z.string(),
  fromMe: z.boolean(),
  replyTo: z.string().nullable(),
  groupId: z.string().nullable(),
  ack: ackEnum.nullable().describe('delivery state of a message this session sent; null for received ones'),
  read: z.boolean(),
});
const chatOut = z.object({
  id: z.string(),
  isGroup: z.boolean(),
  name: z.string().nullable(),
  lastMessage: z.object({ id: z.string(), text: z.string(), fromMe: z.boolean(), from: z.string(), timestamp: z.string() }).nullable(),
  unreadCount: z.number(),
});
const groupOut = z.object({ id: z.string(), name: z.string(), participants: z.array(z.string()) });

// The stored message without its read-model fields (_id, sessionId, seq, ackVersion).
const messageView = ({ id, chatId, from, to, text, timestamp, fromMe, replyTo, groupId, ack, read }: MessageView) => ({ id, chatId, from, to, text, timestamp, fromMe, replyTo, groupId, ack, read });
const chatView = (c: ChatView) => ({ id: c.chatId, isGroup: c.isGroup, name: c.name, lastMessage: c.lastMessage, unreadCount: Math.max(0, c.unreadCount) });
const groupView = (g: GroupView) => ({ id: g.id, name: g.name, participants: g.participants });

const textSchema = z.string().min(1).max(4096);

export const messagingChatRoutes = [
  defineRoute({
    method: 'GET',
    path: '/messaging/sessions/{sessionId}/chats',
    operationId: 'listMessagingChats',
    summary: "a session's chats with their last message and unread count, most recent first",
    tag,
    auth,
    permission: 'view_resources',
    params: sessionParams,
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(chatOut), nextCursor: z.string().nullable() }) }, ...errors },
    async handler(input) {
      const { params, query, services } = input;
      await callerSession(input, params.sessionId);
      return pageReply(await listChats(services.readStore, params.sessionId, query.limit, query.cursor ?? null), chatView);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/messaging/sessions/{sessionId}/chats/{chatId}/messages',
    operationId: 'listMessagingChatMessages',
    summary: 'the messages of a chat, newest first, with the ack state of the ones this session sent',
    tag,
    auth,
    permission: 'view_resources',
    params: chatParams,
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(messageOut), nextCursor: z.string().nullable() }) }, ...errors },
    async handler(input) {
      const { params, query, services } = input;
      await callerSession(input, params.sessionId);
      return pageReply(await listMessages(services.readStore, params.sessionId, params.chatId, query.limit, query.cursor ?? null), messageView);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/messaging/sessions/{sessionId}/messages',
    operationId: 'sendMessagingMessage',
    summary: 'send a text to a chat; answers the message id with ack PENDING (then SERVER, DEVICE, READ as the network reports)',
    tag,
    auth,
    permission: 'edit_resources',
    params: sessionParams,
    body: z.strictObject({ chatId: chatIdSchema, text: textSchema, replyTo: z.string().min(1).max(256).nullable().optional() }),
    responses: {
      201: { description: 'sent', schema: z.object({ success: z.literal(true), message: messageOut }) },
      ...errors,
      404: { description: 'MESSAGING_SESSION_NOT_FOUND, or MESSAGING_CHAT_NOT_FOUND for a group the session is not in' },
      409: notWorkingError,
      502: providerError,
    },
    async handler(input) {
      const { params, body, services, command } = input;
      const doc = await callerSession(input, params.sessionId);
      const provider = services.messaging.provider(doc.provider);
      const { result, message } = await sendMessage(services.eventStore, command, provider, params.sessionId, body, services.newId);
      await input.settle(result.position, msgSessionStreamId(params.sessionId));
      const stored = await getMessage(services.readStore, params.sessionId, message.id);
      // The answer is the message as recorded (ack PENDING), even if the network already moved it on.
      const reply = stored ? { ...messageView(stored), ack: 'PENDING' as const } : { ...message, replyTo: message.replyTo ?? null, groupId: message.groupId ?? null, ack: 'PENDING' as const, read: true };
      return { status: 201, body: { success: true, message: reply } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/messaging/sessions/{sessionId}/chats/{chatId}/read',
    operationId: 'markMessagingChatRead',
    summary: "mark a chat's received messages read — all (`{all: true}` or an empty body) or up to and including `upToMessageId`; senders get read receipts",
    tag,
    auth,
    permission: 'edit_resources',
    params: chatParams,
    body: z.strictObject({ all: z.literal(true).optional(), upToMessageId: z.string().min(1).max(256).optional() }),
    responses: {
      200: { description: 'marked', schema: z.object({ success: z.literal(true), chatId: z.string(), marked: z.number() }) },
      ...errors,
      404: { description: 'MESSAGING_SESSION_NOT_FOUND, or MESSAGING_MESSAGE_NOT_FOUND for an upToMessageId not in this chat' },
      409: notWorkingError,
      502: providerError,
    },
    async handler(input) {
      const { params, body, services, command } = input;
      if (body.all && body.upToMessageId) {
        throw new DomainError('VALIDATION_FAILED', 'body.upToMessageId: give either all or upToMessageId', 'invalid', { fields: [{ field: 'body.upToMessageId', message: 'give either all or upToMessageId' }] });
      }
      const doc = await callerSession(input, params.sessionId);
      if (body.upToMessageId) {
        const message = await getMessage(services.readStore, params.sessionId, body.upToMessageId);
        if (!message || message.chatId !== params.chatId) {
          throw new DomainError('MESSAGING_MESSAGE_NOT_FOUND', 'no such message in this chat', 'not_found', { field: 'body.upToMessageId' });
        }
      }
      const provider = services.messaging.provider(doc.provider);
      const { result, marked } = await markChatRead(services.eventStore, command, provider, params.sessionId, params.chatId, body.upToMessageId ?? null);
      await input.settle(result.position, msgSessionStreamId(params.sessionId));
      return { status: 200, body: { success: true, chatId: params.chatId, marked } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/messaging/sessions/{sessionId}/groups',
    operationId: 'listMessagingGroups',
    summary: 'the groups the session is in (id, name, participants); WAHA sessions ask the WAHA server',
    tag,
    auth,
    permission: 'view_resources',
    params: sessionParams,
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(groupOut), nextCursor: z.string().nullable() }) }, ...errors, 502: providerError },
    async handler(input) {
      const { params, query, services } = input;
      const doc = await callerSession(input, params.sessionId);
      if (doc.provider !== 'embedded') {
        const { state } = await loadSession(services.eventStore, params.sessionId);
        const groups = (await services.messaging.provider(doc.provider).listGroups(providerRefOf(state)).catch(providerFailure)) ?? [];
        // WAHA answers the whole list; we page it with an offset cursor.
        const offset = query.cursor && /^\d{1,9}$/.test(query.cursor) ? Number(query.cursor) : 0;
        const items = groups.slice(offset, offset + query.limit);
        const next = offset + query.limit < groups.length ? String(offset + query.limit) : null;
        return { status: 200, body: { success: true, items, nextCursor: next } };
      }
      return pageReply(await listGroups(services.readStore, params.sessionId, query.limit, query.cursor ?? null), groupView);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/messaging/sessions/{sessionId}/groups',
    operationId: 'createMessagingGroup',
    summary: 'create a group on the embedded network (a set of session addresses); the creator is always a participant',
    tag,
    auth,
    permission: 'edit_resources',
    params: sessionParams,
    body: z.strictObject({ name: z.string().trim().min(1).max(100), participants: z.array(chatIdSchema).min(1).max(256) }),
    responses: {
      201: { description: 'created', schema: z.object({ success: z.literal(true), group: groupOut }) },
      ...errors,
      409: { description: 'MESSAGING_SESSION_NOT_WORKING, or MESSAGING_PROVIDER_UNSUPPORTED for a WAHA session' },
    },
    async handler(input) {
      const { params, body, services, command } = input;
      await callerSession(input, params.sessionId);
      const { result, group } = await createGroup(services.eventStore, command, params.sessionId, body, services.newId);
      await input.settle(result.position, msgSessionStreamId(params.sessionId));
      return { status: 201, body: { success: true, group } };
    },
  }),
];
