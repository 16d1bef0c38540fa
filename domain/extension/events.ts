import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/** Every extension chat says where it came from; the extension is the only source today. */
export const EXTENSION_CHAT_SOURCE = 'web-extension';
/** A chat's title until someone renames it or one is generated from its messages. */
export const DEFAULT_CHAT_TITLE = 'New chat';
export const MAX_CHAT_TITLE_CHARS = 200;

export const chatTitleSchema = z.string().trim().min(1).max(MAX_CHAT_TITLE_CHARS);
export const chatRoleSchema = z.enum(['user', 'assistant', 'system']);
export const chatMessageSchema = z.object({
  role: chatRoleSchema,
  content: z.string(),
  createdAt: z.string().nullable(),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;

export const extensionChatEventSchemas = {
  ExtensionChatCreated: z.object({
    chatId: z.string(),
    ownerId: z.string(),
    orgId: z.string().nullable(),
    workspaceId: z.string().nullable(),
    source: z.literal(EXTENSION_CHAT_SOURCE),
    title: chatTitleSchema,
    /** The first version of the messages (version 1). */
    messages: z.array(chatMessageSchema),
    at: z.string(),
  }),
  ExtensionChatRenamed: z.object({ title: chatTitleSchema, by: z.string(), at: z.string() }),
  /** A replacement of all messages: version n+1 of the chat's messages. */
  ExtensionChatMessagesReplaced: z.object({ version: z.number().int().min(2), messages: z.array(chatMessageSchema), by: z.string(), at: z.string() }),
  /** A title made from the messages while the chat still had the default one; `model` is who made it ('offline' = first words). */
  ExtensionChatTitleGenerated: z.object({ title: chatTitleSchema, provider: z.string(), model: z.string(), fromVersion: z.number().int().min(1), at: z.string() }),
  ExtensionChatDeleted: z.object({ by: z.string(), at: z.string() }),
};

export type ExtensionChatEvent = EventsOf<typeof extensionChatEventSchemas>;

export const EXTENSION_CHAT_CATEGORY = 'extchat';
export const extensionChatStreamId = (chatId: string) => `${EXTENSION_CHAT_CATEGORY}-${chatId}`;
