import {
  DEFAULT_CHAT_TITLE,
  chatNotFound,
  evolveExtensionChat,
  extensionChatDecider,
  extensionChatStreamId,
  initialExtensionChatState,
  isChatVisibleTo,
  titleFromMessages,
  type ChatLimits,
  type ChatMessage,
  type ChatScope,
  type ExtensionChatEvent,
  type ExtensionChatState,
} from '../domain/extension/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import type { LlmCaller } from '../ports/llm.js';
import { handleAtContextTime, loadState, type CommandContext } from './handle.js';
import { askExtensionModel, type ExtensionAiPorts } from './extension-ai.js';
import type { ModelRef } from './extension-models.js';

/**
 * The extension's chats (`extchat-<id>`): every write checks the chat belongs to the caller in
 * its tenant first (another's chat is "not found"), then decides on the chat's own stream.
 */
export interface ChatScopeFull extends ChatScope {
  workspaceId: string | null;
}

async function visibleChat(store: EventStore, chatId: string, scope: ChatScope): Promise<ExtensionChatState> {
  const { state } = await loadState(store, extensionChatStreamId(chatId), extensionChatDecider);
  if (!state.exists || state.deleted || !isChatVisibleTo(state, scope)) throw chatNotFound();
  return state;
}

export function createChat(store: EventStore, context: CommandContext, scope: ChatScopeFull, input: { chatId: string; title: string | null; messages: ChatMessage[]; limits: ChatLimits }) {
  return handleAtContextTime(store, context, extensionChatStreamId(input.chatId), extensionChatDecider, {
    type: 'CreateChat', chatId: input.chatId, ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId, title: input.title, messages: input.messages, limits: input.limits,
  });
}

export async function renameChat(store: EventStore, context: CommandContext, scope: ChatScope, chatId: string, title: string) {
  await visibleChat(store, chatId, scope);
  return handleAtContextTime(store, context, extensionChatStreamId(chatId), extensionChatDecider, { type: 'RenameChat', title, by: scope.userId });
}

export async function replaceChatMessages(store: EventStore, context: CommandContext, scope: ChatScope, chatId: string, messages: ChatMessage[], limits: ChatLimits) {
  await visibleChat(store, chatId, scope);
  return handleAtContextTime(store, context, extensionChatStreamId(chatId), extensionChatDecider, { type: 'ReplaceMessages', messages, limits, by: scope.userId });
}

export async function deleteChat(store: EventStore, context: CommandContext, scope: ChatScope, chatId: string) {
  await visibleChat(store, chatId, scope);
  return handleAtContextTime(store, context, extensionChatStreamId(chatId), extensionChatDecider, { type: 'DeleteChat', by: scope.userId });
}

const TITLE_TIMEOUT_MS = 15_000;

/**
 * When the chat still has the default title and a user message, a title is made from the messages
 * and recorded as its own event (ExtensionChatTitleGenerated). The offline provider (and any
 * failure of the model: the messages were already accepted) gives the first words of the first
 * user message. Answers the position of the title event, or null when none was recorded.
 */
export async function generateChatTitle(ports: ExtensionAiPorts, context: CommandContext, caller: LlmCaller & ChatScope, chatId: string, model: ModelRef): Promise<{ position: number | null; title: string | null }> {
  const state = await visibleChat(ports.eventStore, chatId, caller);
  if (!state.titleIsDefault) return { position: null, title: null };
  const firstWords = titleFromMessages(state.messages);
  if (!firstWords) return { position: null, title: null };
  let title = firstWords;
  let by: ModelRef = { provider: 'offline', model: 'first-words' };
  if (model.provider !== 'offline') {
    try {
      const conversation = state.messages.slice(0, 6).map((m) => `${m.role}: ${m.content.slice(0, 2000)}`).join('\n');
      const answer = await askExtensionModel(ports, context, caller, {
        model,
        maxTokens: 24,
        signal: AbortSignal.timeout(TITLE_TIMEOUT_MS),
        messages: [
          { role: 'system', content: 'Write a short title (at most 6 words) for this conversation. Answer with the title only, without quotes.' },
          { role: 'user', content: conversation },
        ],
      });
      const made = answer.result.text.replace(/^["'\s]+|["'\s.]+$/g, '').replace(/\s+/g, ' ').slice(0, 80);
      if (made.length > 0 && made !== DEFAULT_CHAT_TITLE) {
        title = made;
        by = model;
      }
    } catch {
      // The model's failure must not lose the replacement: the first words stand in.
    }
  }
  const result = await handleAtContextTime(ports.eventStore, context, extensionChatStreamId(chatId), extensionChatDecider, {
    type: 'RecordGeneratedTitle', title, provider: by.provider, model: by.model, fromVersion: state.version,
  });
  return { position: result.position, title: result.events.length > 0 ? title : null };
}

export interface ChatVersion {
  /** The chat's id, as every resource answers it. */
  id: string;
  /** Deprecated alias of `id` (issue 36), kept for one version. */
  chatId: string;
  version: number;
  title: string;
  messages: ChatMessage[];
  /** When this version of the messages was written. */
  at: string;
  /** The chat's current version. */
  latestVersion: number;
}

/** Version `n` of a chat's messages, read back from the log (1 = as created); the title as it was then. */
export async function loadChatVersion(store: EventStore, scope: ChatScope, chatId: string, n: number): Promise<ChatVersion> {
  const current = await visibleChat(store, chatId, scope);
  if (n < 1 || n > current.version) {
    throw new DomainError('CHAT_VERSION_NOT_FOUND', `chat version ${n} not found; versions are 1..${current.version}`, 'not_found', { latestVersion: current.version });
  }
  const events = await store.readStream(extensionChatStreamId(chatId));
  let state = initialExtensionChatState;
  let at = '';
  for (const recorded of events) {
    const event = { type: recorded.type, data: recorded.data } as ExtensionChatEvent;
    if (event.type === 'ExtensionChatMessagesReplaced' && event.data.version > n) break;
    state = evolveExtensionChat(state, event);
    if (event.type === 'ExtensionChatCreated' || event.type === 'ExtensionChatMessagesReplaced') at = event.data.at;
  }
  return { id: chatId, chatId, version: state.version, title: state.title, messages: state.messages, at, latestVersion: current.version };
}
