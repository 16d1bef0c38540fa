import { z } from 'zod';
import { createChat, deleteChat, generateChatTitle, loadChatVersion, renameChat, replaceChatMessages } from '../../commands/extension-chats.js';
import { chooseExtensionModel } from '../../commands/extension-models.js';
import { chatNotFound, chatRoleSchema, chatTitleSchema, extensionChatStreamId, tooManyMessages, type ChatMessage } from '../../domain/extension/index.js';
import { chatView, getExtensionChat, listExtensionChats } from '../../projections/extension.js';
import { defineRoute, type RouteInput } from '../route.js';
import { EXTENSION_TAG } from './extension.js';
import { modelPorts } from './extension-ai.js';
import { pageQuery, pageReply } from './pagination.js';

/** The extension's chats (source "web-extension"): the caller's own, in its active tenant. */

type AnyInput = RouteInput<unknown, unknown, unknown>;
const scopeOf = (input: AnyInput) => ({ userId: input.principal!.userId, orgId: input.principal!.orgId, workspaceId: input.principal!.workspaceId });
const chatParams = z.strictObject({ chatId: z.uuid() });
const versionParams = z.strictObject({ chatId: z.uuid(), n: z.coerce.number().int().min(1).max(1_000_000) });

const MAX_MESSAGE_CHARS = 100_000;
const messageIn = z.strictObject({
  role: chatRoleSchema,
  content: z.string().max(MAX_MESSAGE_CHARS),
  createdAt: z.iso.datetime({ offset: true }).optional(),
});
/** The count is checked by the decider (TOO_MANY_MESSAGES) so that 51 messages get their own code; the array is bounded for parsing. */
const messagesIn = z.array(messageIn).max(1000);
const messageOut = z.object({ role: chatRoleSchema, content: z.string(), createdAt: z.string().nullable() });
/** Issue 36: chats answer `id` like every other resource; `chatId` stays one version as a deprecated alias (path parameters keep their names). */
const chatIdAlias = z.string().meta({ deprecated: true, description: 'deprecated alias of `id`, removed in the next version' });
const chatOut = z.object({
  id: z.string().describe("the chat's id"), chatId: chatIdAlias, source: z.literal('web-extension'), title: z.string(), messageCount: z.number().int(), version: z.number().int(),
  createdAt: z.string(), updatedAt: z.string(), messages: z.array(messageOut).optional(),
});
const chatReply = z.object({ success: z.literal(true), chat: chatOut });
const notFound = { 404: { description: 'CHAT_NOT_FOUND (also another user\'s or another tenant\'s chat)' } };

const toMessages = (messages: z.infer<typeof messagesIn>): ChatMessage[] => messages.map((m) => ({ role: m.role, content: m.content, createdAt: m.createdAt ?? null }));
const limitsOf = (input: AnyInput) => ({ maxMessages: input.services.config.EXTENSION_CHAT_MAX_MESSAGES });

async function readChat(input: AnyInput, chatId: string) {
  const doc = await getExtensionChat(input.services.readStore, scopeOf(input), chatId);
  if (!doc) throw chatNotFound();
  return chatView(doc, true);
}

/** Generates the title when the chat still has the default one (its own event); failures never undo the write. */
async function titleAfterWrite(input: AnyInput, chatId: string): Promise<number | null> {
  const { services } = input;
  const caller = scopeOf(input);
  const model = await chooseExtensionModel(modelPorts(input), caller, null);
  const ports = { llm: services.llm, eventStore: services.eventStore, logger: services.logger, newId: services.newId };
  try {
    const made = await generateChatTitle(ports, input.command, caller, chatId, model);
    return made.position;
  } catch (err) {
    services.logger.warn({ err, chatId }, 'chat title not generated');
    return null;
  }
}

export const extensionChatRoutes = [
  defineRoute({
    method: 'GET',
    path: '/extension/chats',
    operationId: 'extensionListChats',
    summary: "the caller's extension chats (source web-extension), newest first, without messages (paginated)",
    tag: EXTENSION_TAG,
    auth: 'bearer',
    query: pageQuery,
    responses: { 200: { description: '{success, items: [chat without messages], nextCursor}', schema: z.object({ success: z.literal(true), items: z.array(chatOut), nextCursor: z.string().nullable() }) } },
    async handler(input) {
      const page = await listExtensionChats(input.services.readStore, scopeOf(input), { limit: input.query.limit, cursor: input.query.cursor });
      return pageReply(page, (doc) => chatView(doc, false));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/extension/chats',
    operationId: 'extensionCreateChat',
    summary: 'create an extension chat (title "New chat" unless given; with messages and no title, a title is generated)',
    tag: EXTENSION_TAG,
    auth: 'bearer',
    body: z.strictObject({ title: chatTitleSchema.optional(), messages: messagesIn.default([]) }),
    responses: { 201: { description: '{success, chat} with its messages', schema: chatReply }, 400: { description: 'VALIDATION_FAILED, TOO_MANY_MESSAGES (more than 50)' } },
    async handler(input) {
      const chatId = input.services.newId();
      const result = await createChat(input.services.eventStore, input.command, scopeOf(input), { chatId, title: input.body.title ?? null, messages: toMessages(input.body.messages), limits: limitsOf(input) });
      const streamId = extensionChatStreamId(chatId);
      const titled = input.body.title ? null : await titleAfterWrite(input, chatId);
      await input.settle(titled ?? result.position, streamId);
      return { status: 201, body: { success: true, chat: await readChat(input, chatId) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/extension/chats/{chatId}',
    operationId: 'extensionGetChat',
    summary: 'one chat with its messages',
    tag: EXTENSION_TAG,
    auth: 'bearer',
    params: chatParams,
    responses: { 200: { description: '{success, chat}', schema: chatReply }, ...notFound },
    async handler(input) {
      return { status: 200, body: { success: true, chat: await readChat(input, input.params.chatId) } };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/extension/chats/{chatId}',
    operationId: 'extensionRenameChat',
    summary: 'rename a chat (a renamed chat never gets a generated title)',
    tag: EXTENSION_TAG,
    auth: 'bearer',
    params: chatParams,
    body: z.strictObject({ title: chatTitleSchema }),
    responses: { 200: { description: '{success, chat}', schema: chatReply }, ...notFound },
    async handler(input) {
      const result = await renameChat(input.services.eventStore, input.command, scopeOf(input), input.params.chatId, input.body.title);
      await input.settle(result.position, extensionChatStreamId(input.params.chatId));
      return { status: 200, body: { success: true, chat: await readChat(input, input.params.chatId) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/extension/chats/{chatId}',
    operationId: 'extensionDeleteChat',
    summary: 'delete a chat',
    tag: EXTENSION_TAG,
    auth: 'bearer',
    params: chatParams,
    responses: { 200: { description: '{success, deleted, id} (chatId: deprecated alias of id)', schema: z.object({ success: z.literal(true), deleted: z.literal(true), id: z.string(), chatId: chatIdAlias }) }, ...notFound },
    async handler(input) {
      const result = await deleteChat(input.services.eventStore, input.command, scopeOf(input), input.params.chatId);
      await input.settle(result.position, extensionChatStreamId(input.params.chatId));
      return { status: 200, body: { success: true, deleted: true, id: input.params.chatId, chatId: input.params.chatId } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/extension/chats/{chatId}/messages',
    operationId: 'extensionReplaceChatMessages',
    summary: 'replace the messages (at most 50: 51 is 400 TOO_MANY_MESSAGES and nothing changes); a new version each time; a title is generated while the title is "New chat"',
    tag: EXTENSION_TAG,
    auth: 'bearer',
    params: chatParams,
    body: z.strictObject({ messages: messagesIn }),
    responses: { 200: { description: '{success, chat} (version = the new version)', schema: chatReply }, 400: { description: 'VALIDATION_FAILED, TOO_MANY_MESSAGES (details: count, max)' }, ...notFound },
    async handler(input) {
      const { params, body } = input;
      const limits = limitsOf(input);
      // Before anything is read: a refused replacement must not depend on the chat's state.
      if (body.messages.length > limits.maxMessages) throw tooManyMessages(body.messages.length, limits.maxMessages);
      const result = await replaceChatMessages(input.services.eventStore, input.command, scopeOf(input), params.chatId, toMessages(body.messages), limits);
      const titled = await titleAfterWrite(input, params.chatId);
      await input.settle(titled ?? result.position, extensionChatStreamId(params.chatId));
      return { status: 200, body: { success: true, chat: await readChat(input, params.chatId) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/extension/chats/{chatId}/versions/{n}',
    operationId: 'extensionGetChatVersion',
    summary: "version n of a chat's messages, read back from the log (1 = as created; each replacement adds one)",
    tag: EXTENSION_TAG,
    auth: 'bearer',
    params: versionParams,
    responses: {
      200: { description: '{success, id, version, latestVersion, title, messages, at} (id: the chat\'s; chatId: deprecated alias of id)', schema: z.object({ success: z.literal(true), id: z.string(), chatId: chatIdAlias, version: z.number().int(), latestVersion: z.number().int(), title: z.string(), messages: z.array(messageOut), at: z.string() }) },
      404: { description: 'CHAT_NOT_FOUND, or CHAT_VERSION_NOT_FOUND (details.latestVersion)' },
    },
    async handler(input) {
      const version = await loadChatVersion(input.services.eventStore, scopeOf(input), input.params.chatId, input.params.n);
      return { status: 200, body: { success: true, ...version } };
    },
  }),
];
