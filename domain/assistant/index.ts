import { decider, type Decider } from '../shared/decider.js';
import { decideConversation, type AssistantCommand } from './decide.js';
import { assistantEventSchemas, type AssistantEvent } from './events.js';
import { evolveConversation, initialConversationState, type ConversationState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';

/** An assistant conversation (`assistantconv-<id>`): its messages, the generation in progress, tool steps and feedback. */
export const conversationDecider: Decider<AssistantCommand, ConversationState, AssistantEvent> = decider(initialConversationState, evolveConversation, decideConversation, assistantEventSchemas);
