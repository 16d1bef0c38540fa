import { DEFAULT_CHAT_TITLE, type ChatMessage, type ExtensionChatEvent } from './events.js';

export interface ExtensionChatState {
  exists: boolean;
  deleted: boolean;
  chatId: string | null;
  ownerId: string | null;
  orgId: string | null;
  workspaceId: string | null;
  title: string;
  /** True until a rename or a generated title: only then is a title generated. */
  titleIsDefault: boolean;
  messages: ChatMessage[];
  /** Version of the messages: 1 at creation, +1 per replacement. */
  version: number;
  createdAt: string | null;
  updatedAt: string | null;
}

export const initialExtensionChatState: ExtensionChatState = {
  exists: false,
  deleted: false,
  chatId: null,
  ownerId: null,
  orgId: null,
  workspaceId: null,
  title: DEFAULT_CHAT_TITLE,
  titleIsDefault: true,
  messages: [],
  version: 0,
  createdAt: null,
  updatedAt: null,
};

export function evolveExtensionChat(state: ExtensionChatState, event: ExtensionChatEvent): ExtensionChatState {
  switch (event.type) {
    case 'ExtensionChatCreated': {
      const d = event.data;
      return {
        ...initialExtensionChatState,
        exists: true,
        chatId: d.chatId,
        ownerId: d.ownerId,
        orgId: d.orgId,
        workspaceId: d.workspaceId,
        title: d.title,
        titleIsDefault: d.title === DEFAULT_CHAT_TITLE,
        messages: d.messages,
        version: 1,
        createdAt: d.at,
        updatedAt: d.at,
      };
    }
    case 'ExtensionChatRenamed':
      return { ...state, title: event.data.title, titleIsDefault: false, updatedAt: event.data.at };
    case 'ExtensionChatMessagesReplaced':
      return { ...state, messages: event.data.messages, version: event.data.version, updatedAt: event.data.at };
    case 'ExtensionChatTitleGenerated':
      return { ...state, title: event.data.title, titleIsDefault: false, updatedAt: event.data.at };
    case 'ExtensionChatDeleted':
      return { ...state, deleted: true, updatedAt: event.data.at };
    default:
      return state;
  }
}

/** Who may see a chat: its owner, in the tenant (organization or personal workspace) it was made in. */
export interface ChatScope {
  userId: string;
  orgId: string | null;
}

export const isChatVisibleTo = (state: Pick<ExtensionChatState, 'ownerId' | 'orgId'>, scope: ChatScope) => state.ownerId === scope.userId && state.orgId === scope.orgId;

/** The first words of the first user message, as a title (the offline provider's title, and the fallback). */
export function titleFromMessages(messages: ChatMessage[], maxWords = 6, maxChars = 60): string | null {
  const first = messages.find((m) => m.role === 'user' && m.content.trim().length > 0);
  if (!first) return null;
  const words = first.content.replace(/\s+/g, ' ').trim().split(' ').slice(0, maxWords);
  let title = words.join(' ');
  if (title.length > maxChars) title = `${title.slice(0, maxChars - 1).trimEnd()}…`;
  return title.length > 0 ? title : null;
}
