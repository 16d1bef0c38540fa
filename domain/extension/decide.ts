import { DomainError } from '../shared/decider.js';
import { DEFAULT_CHAT_TITLE, EXTENSION_CHAT_SOURCE, type ChatMessage, type ExtensionChatEvent } from './events.js';
import type { ExtensionChatState } from './state.js';

/** Bounds the deciders enforce; they come in with the command (configuration is not the domain's to read). */
export interface ChatLimits {
  maxMessages: number;
}

export type ExtensionChatCommand =
  | { type: 'CreateChat'; chatId: string; ownerId: string; orgId: string | null; workspaceId: string | null; title: string | null; messages: ChatMessage[]; limits: ChatLimits; at: string }
  | { type: 'RenameChat'; title: string; by: string; at: string }
  | { type: 'ReplaceMessages'; messages: ChatMessage[]; limits: ChatLimits; by: string; at: string }
  | { type: 'RecordGeneratedTitle'; title: string; provider: string; model: string; fromVersion: number; at: string }
  | { type: 'DeleteChat'; by: string; at: string };

export const chatNotFound = () => new DomainError('CHAT_NOT_FOUND', 'chat not found', 'not_found');

export function tooManyMessages(count: number, max: number): DomainError {
  return new DomainError('TOO_MANY_MESSAGES', `a chat holds at most ${max} messages; ${count} were sent`, 'invalid', { field: 'body.messages', count, max });
}

export function decideExtensionChat(command: ExtensionChatCommand, state: ExtensionChatState): ExtensionChatEvent[] {
  if (command.type === 'CreateChat') {
    if (state.exists) throw new DomainError('CHAT_EXISTS', 'chat already exists', 'conflict');
    if (command.messages.length > command.limits.maxMessages) throw tooManyMessages(command.messages.length, command.limits.maxMessages);
    return [{
      type: 'ExtensionChatCreated',
      data: {
        chatId: command.chatId, ownerId: command.ownerId, orgId: command.orgId, workspaceId: command.workspaceId,
        source: EXTENSION_CHAT_SOURCE, title: command.title ?? DEFAULT_CHAT_TITLE, messages: command.messages, at: command.at,
      },
    }];
  }
  if (!state.exists || state.deleted) throw chatNotFound();
  switch (command.type) {
    case 'RenameChat':
      if (command.title === state.title && !state.titleIsDefault) return [];
      return [{ type: 'ExtensionChatRenamed', data: { title: command.title, by: command.by, at: command.at } }];
    case 'ReplaceMessages':
      if (command.messages.length > command.limits.maxMessages) throw tooManyMessages(command.messages.length, command.limits.maxMessages);
      return [{ type: 'ExtensionChatMessagesReplaced', data: { version: state.version + 1, messages: command.messages, by: command.by, at: command.at } }];
    case 'RecordGeneratedTitle':
      // A rename (or another generation) that landed first wins: the generated title is dropped.
      if (!state.titleIsDefault) return [];
      return [{ type: 'ExtensionChatTitleGenerated', data: { title: command.title, provider: command.provider, model: command.model, fromVersion: command.fromVersion, at: command.at } }];
    case 'DeleteChat':
      return [{ type: 'ExtensionChatDeleted', data: { by: command.by, at: command.at } }];
  }
}
