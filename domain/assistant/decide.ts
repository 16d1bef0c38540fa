import { DomainError } from '../shared/decider.js';
import { ASSISTANT_LIMITS, type AssistantEvent, type LlmUsageSummary } from './events.js';
import { conversationVisibleTo, type ConversationScope, type ConversationState } from './state.js';

/**
 * Commands of a conversation (`assistantconv-<id>`). The user's commands carry `scope` (another
 * user's conversation is a 404); the generation's own records (tool steps, completion, cancel) come
 * from the process running it and are decided only while that reply is the one running, so a late
 * record after a cancel or a delete changes nothing.
 */
export type AssistantCommand =
  | { type: 'CreateConversation'; conversationId: string; userId: string; orgId: string | null; workspaceId: string | null; title: string; at: string }
  | { type: 'RenameConversation'; scope: ConversationScope; title: string; at: string }
  | { type: 'DeleteConversation'; scope: ConversationScope; at: string }
  | { type: 'SendMessage'; scope: ConversationScope; messageId: string; replyId: string; content: string; provider: string; model: string; at: string }
  | { type: 'RecordToolCall'; replyId: string; toolCallId: string; name: string; input: Record<string, unknown>; iteration: number; at: string }
  | { type: 'RecordTextDelta'; replyId: string; iteration: number; text: string; at: string }
  | { type: 'RecordToolResult'; replyId: string; toolCallId: string; name: string; content: string; isError: boolean; iteration: number; at: string }
  | {
      type: 'CompleteGeneration';
      replyId: string;
      content: string;
      finishReason: string;
      iterations: number;
      toolCalls: number;
      usage: LlmUsageSummary;
      cost: number;
      error: { code: string; message: string } | null;
      at: string;
    }
  | { type: 'RequestCancel'; scope: ConversationScope; at: string }
  | { type: 'CancelGeneration'; replyId: string; content: string; usage: LlmUsageSummary; cost: number; at: string }
  | { type: 'GiveFeedback'; scope: ConversationScope; messageId: string; rating: 'like' | 'dislike' | null; comment: string | null; at: string };

export const conversationNotFound = () => new DomainError('CONVERSATION_NOT_FOUND', 'conversation not found', 'not_found');

function requireConversation(state: ConversationState, scope: ConversationScope) {
  if (!state.exists || state.deleted || !conversationVisibleTo(state, scope)) throw conversationNotFound();
}

const cut = (text: string) => (text.length <= ASSISTANT_LIMITS.toolTextChars ? text : `${text.slice(0, ASSISTANT_LIMITS.toolTextChars)}\n[cut: ${text.length} characters]`);

function cutInput(input: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(input);
  return json.length <= ASSISTANT_LIMITS.toolTextChars ? input : { truncated: json.slice(0, ASSISTANT_LIMITS.toolTextChars) };
}

export function decideConversation(command: AssistantCommand, state: ConversationState): AssistantEvent[] {
  const at = command.at;
  switch (command.type) {
    case 'CreateConversation': {
      if (state.exists) throw new DomainError('CONVERSATION_EXISTS', 'conversation id already used', 'conflict');
      const { type: _type, ...data } = command;
      return [{ type: 'ConversationCreated', data }];
    }
    case 'RenameConversation':
      requireConversation(state, command.scope);
      return command.title === state.title ? [] : [{ type: 'ConversationRenamed', data: { title: command.title, at } }];
    case 'DeleteConversation':
      requireConversation(state, command.scope);
      return [{ type: 'ConversationDeleted', data: { at } }];
    case 'SendMessage': {
      requireConversation(state, command.scope);
      if (state.running) {
        throw new DomainError('CONVERSATION_BUSY', 'the assistant is still answering the previous message; wait or cancel it (POST …/cancel)', 'conflict', { runningMessageId: state.running });
      }
      if (state.messages.length + 2 > ASSISTANT_LIMITS.messages) {
        throw new DomainError('TOO_MANY_MESSAGES', `a conversation holds at most ${ASSISTANT_LIMITS.messages} messages; start a new one`, 'conflict', { limit: ASSISTANT_LIMITS.messages });
      }
      const { messageId, replyId, content, provider, model } = command;
      return [{ type: 'UserMessageSent', data: { messageId, replyId, content, provider, model, at } }];
    }
    case 'RecordToolCall':
      if (state.deleted || state.running !== command.replyId) return [];
      return [{ type: 'AssistantToolCalled', data: { replyId: command.replyId, toolCallId: command.toolCallId, name: command.name, input: cutInput(command.input), iteration: command.iteration, at } }];
    case 'RecordTextDelta':
      if (state.deleted || state.running !== command.replyId || command.text === '') return [];
      return [{ type: 'AssistantTextDelta', data: { replyId: command.replyId, iteration: command.iteration, text: command.text, at } }];
    case 'RecordToolResult':
      if (state.deleted || state.running !== command.replyId) return [];
      return [{ type: 'AssistantToolResulted', data: { replyId: command.replyId, toolCallId: command.toolCallId, name: command.name, content: cut(command.content), isError: command.isError, iteration: command.iteration, at } }];
    case 'CompleteGeneration': {
      if (state.deleted || state.running !== command.replyId) return [];
      const { type: _type, ...data } = command;
      return [{ type: 'GenerationCompleted', data }];
    }
    case 'RequestCancel':
      requireConversation(state, command.scope);
      if (!state.running || state.cancelRequested) return [];
      return [{ type: 'GenerationCancelRequested', data: { replyId: state.running, at } }];
    case 'CancelGeneration':
      if (state.deleted || state.running !== command.replyId) return [];
      return [{ type: 'GenerationCancelled', data: { replyId: command.replyId, content: command.content, usage: command.usage, cost: command.cost, at } }];
    case 'GiveFeedback': {
      requireConversation(state, command.scope);
      const message = state.messages.find((m) => m.id === command.messageId);
      if (!message) throw new DomainError('MESSAGE_NOT_FOUND', 'message not found in this conversation', 'not_found', { messageId: command.messageId });
      if (message.role !== 'assistant') throw new DomainError('FEEDBACK_ON_USER_MESSAGE', "feedback is for the assistant's messages", 'invalid', { field: 'params.messageId' });
      if (command.rating === null && message.feedback === null) return [];
      const comment = command.rating === null ? null : command.comment;
      if (message.feedback && command.rating === message.feedback.rating && comment === message.feedback.comment) return [];
      return [{ type: 'MessageFeedbackGiven', data: { messageId: command.messageId, rating: command.rating, comment, at } }];
    }
  }
}
