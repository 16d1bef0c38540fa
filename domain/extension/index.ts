import { decider, type Decider } from '../shared/decider.js';
import { decideExtensionChat, type ExtensionChatCommand } from './decide.js';
import { extensionChatEventSchemas, type ExtensionChatEvent } from './events.js';
import { evolveExtensionChat, initialExtensionChatState, type ExtensionChatState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';

/**
 * The web extension's chats: one stream per chat (`extchat-<id>`). Every replacement of the
 * messages is an event with its version, so any earlier version can be read back from the log;
 * a generated title is its own event, recorded only while the chat still has the default title.
 */
export const extensionChatDecider: Decider<ExtensionChatCommand, ExtensionChatState, ExtensionChatEvent> = decider(
  initialExtensionChatState,
  evolveExtensionChat,
  decideExtensionChat,
  extensionChatEventSchemas,
);
export * from './settings.js';
