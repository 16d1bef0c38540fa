import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/**
 * The `msgsession` stream: one stream per messaging session (`msgsession-<sessionId>`). This is the
 * contract the webhooks context delivers from (`message` ← MessageReceived, `message_ack` ←
 * MessageAckChanged, `session.status` ← MessagingSessionStatusChanged): fields may be added, never
 * renamed.
 */
export const MSG_SESSION_CATEGORY = 'msgsession';
export const msgSessionStreamId = (sessionId: string) => `${MSG_SESSION_CATEGORY}-${sessionId}`;
export const sessionIdOfStream = (streamId: string) => streamId.slice(MSG_SESSION_CATEGORY.length + 1);

export const PROVIDERS = ['embedded', 'waha'] as const;
export type ProviderKind = (typeof PROVIDERS)[number];

export const SESSION_STATUSES = ['STOPPED', 'STARTING', 'SCAN_QR_CODE', 'WORKING', 'FAILED'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Delivery state of a message we sent, in the order it can only move forward (ERROR ends it too). */
export const ACKS = ['PENDING', 'SERVER', 'DEVICE', 'READ', 'ERROR'] as const;
export type Ack = (typeof ACKS)[number];

const iso = z.string();
const meSchema = z.object({ id: z.string(), pushName: z.string().optional() });

export const messageSchema = z.object({
  id: z.string(),
  chatId: z.string(),
  from: z.string(),
  to: z.string(),
  text: z.string(),
  timestamp: iso,
  fromMe: z.boolean(),
  replyTo: z.string().nullable().optional(),
  groupId: z.string().nullable().optional(),
});
export type ChatMessage = z.infer<typeof messageSchema>;

export const groupSchema = z.object({ id: z.string(), name: z.string(), participants: z.array(z.string()) });
export type ChatGroup = z.infer<typeof groupSchema>;

export const messagingEventSchemas = {
  MessagingSessionInitialized: z.object({
    sessionId: z.string(),
    name: z.string(),
    provider: z.enum(PROVIDERS),
    ownerId: z.string(),
    orgId: z.string().nullable(),
    workspaceId: z.string().nullable(),
    /** The session's own chat id on its network (embedded: `<sessionId>@embedded`). */
    address: z.string().optional(),
    /** The provider's name for the session (WAHA's `session`), when it differs from ours. */
    providerSessionName: z.string().optional(),
    /** The display name the session shows to others (`me.pushName`); default its name. */
    pushName: z.string().optional(),
    at: iso,
  }),
  MessagingSessionStatusChanged: z.object({
    sessionId: z.string(),
    status: z.enum(SESSION_STATUSES),
    previous: z.enum(SESSION_STATUSES),
    reason: z.string().optional(),
    me: meSchema.optional(),
    qr: z.string().optional(),
    at: iso,
  }),
  MessageReceived: z.object({ sessionId: z.string(), message: messageSchema.extend({ fromMe: z.literal(false) }), at: iso }),
  MessageSent: z.object({ sessionId: z.string(), message: messageSchema.extend({ fromMe: z.literal(true) }), ack: z.literal('PENDING'), at: iso }),
  MessageAckChanged: z.object({ sessionId: z.string(), messageId: z.string(), chatId: z.string(), ack: z.enum(ACKS), previous: z.enum(ACKS), at: iso }),
  /** The session's user read a chat: `messages` are the received messages it covered (read receipts go to their senders). */
  MessagesMarkedRead: z.object({
    sessionId: z.string(),
    chatId: z.string(),
    upToMessageId: z.string().nullable(),
    messages: z.array(z.object({ id: z.string(), from: z.string() })),
    at: iso,
  }),
  /** The session created a group (embedded network) or learnt it is a participant of one. */
  MessagingGroupJoined: z.object({ sessionId: z.string(), group: groupSchema, createdBy: z.string(), at: iso }),
  MessagingSessionDeleted: z.object({ sessionId: z.string(), at: iso }),
};

export type MessagingEvent = EventsOf<typeof messagingEventSchemas>;
export type MessagingEventOf<K extends MessagingEvent['type']> = Extract<MessagingEvent, { type: K }>;
