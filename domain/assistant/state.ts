import type { AssistantEvent, LlmUsageSummary } from './events.js';

export interface ToolStep {
  toolCallId: string;
  name: string;
  input: Record<string, unknown>;
  iteration: number;
  result: { content: string; isError: boolean } | null;
}

export interface ConversationMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  at: string;
  /** Assistant messages: where the generation stands. */
  status: 'running' | 'completed' | 'cancelled' | 'failed' | null;
  replyTo: string | null;
  tools: ToolStep[];
  finishReason: string | null;
  usage: LlmUsageSummary | null;
  cost: number | null;
  error: { code: string; message: string } | null;
  feedback: { rating: 'like' | 'dislike'; comment: string | null; at: string } | null;
  provider: string | null;
  model: string | null;
  completedAt: string | null;
}

export interface ConversationState {
  exists: boolean;
  deleted: boolean;
  conversationId: string;
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
  title: string;
  messages: ConversationMessage[];
  /** The assistant message being generated, if any. */
  running: string | null;
  cancelRequested: boolean;
  createdAt: string;
  updatedAt: string;
}

export const initialConversationState: ConversationState = {
  exists: false, deleted: false, conversationId: '', userId: '', orgId: null, workspaceId: null, title: '', messages: [], running: null, cancelRequested: false, createdAt: '', updatedAt: '',
};

function updateMessage(state: ConversationState, id: string, change: (m: ConversationMessage) => ConversationMessage): ConversationMessage[] {
  return state.messages.map((m) => (m.id === id ? change(m) : m));
}

export function evolveConversation(state: ConversationState, event: AssistantEvent): ConversationState {
  switch (event.type) {
    case 'ConversationCreated': {
      const d = event.data;
      return { ...state, exists: true, conversationId: d.conversationId, userId: d.userId, orgId: d.orgId, workspaceId: d.workspaceId, title: d.title, createdAt: d.at, updatedAt: d.at };
    }
    case 'ConversationRenamed':
      return { ...state, title: event.data.title, updatedAt: event.data.at };
    case 'ConversationDeleted':
      return { ...state, deleted: true, running: null, updatedAt: event.data.at };
    case 'UserMessageSent': {
      const d = event.data;
      const base = { tools: [], finishReason: null, usage: null, cost: null, error: null, feedback: null, completedAt: null };
      return {
        ...state,
        messages: [
          ...state.messages,
          { ...base, id: d.messageId, role: 'user', content: d.content, at: d.at, status: null, replyTo: null, provider: null, model: null },
          { ...base, id: d.replyId, role: 'assistant', content: '', at: d.at, status: 'running', replyTo: d.messageId, provider: d.provider, model: d.model },
        ],
        running: d.replyId,
        cancelRequested: false,
        updatedAt: d.at,
      };
    }
    case 'AssistantToolCalled': {
      const d = event.data;
      return { ...state, messages: updateMessage(state, d.replyId, (m) => ({ ...m, tools: [...m.tools, { toolCallId: d.toolCallId, name: d.name, input: d.input, iteration: d.iteration, result: null }] })) };
    }
    case 'AssistantTextDelta': {
      // The partial answer as streamed so far: what a cancel recorded by another process keeps.
      const d = event.data;
      return { ...state, messages: updateMessage(state, d.replyId, (m) => ({ ...m, content: m.content + d.text })) };
    }
    case 'AssistantToolResulted': {
      const d = event.data;
      return {
        ...state,
        messages: updateMessage(state, d.replyId, (m) => ({ ...m, tools: m.tools.map((t) => (t.toolCallId === d.toolCallId ? { ...t, result: { content: d.content, isError: d.isError } } : t)) })),
      };
    }
    case 'GenerationCompleted': {
      const d = event.data;
      return {
        ...state,
        running: state.running === d.replyId ? null : state.running,
        messages: updateMessage(state, d.replyId, (m) => ({
          ...m, content: d.content, status: d.error ? 'failed' : 'completed', finishReason: d.finishReason, usage: d.usage, cost: d.cost, error: d.error, completedAt: d.at,
        })),
        updatedAt: d.at,
      };
    }
    case 'GenerationCancelRequested':
      return { ...state, cancelRequested: true };
    case 'GenerationCancelled': {
      const d = event.data;
      return {
        ...state,
        running: state.running === d.replyId ? null : state.running,
        cancelRequested: false,
        messages: updateMessage(state, d.replyId, (m) => ({ ...m, content: d.content, status: 'cancelled', finishReason: 'cancelled', usage: d.usage, cost: d.cost, completedAt: d.at })),
        updatedAt: d.at,
      };
    }
    case 'MessageFeedbackGiven': {
      const d = event.data;
      return { ...state, messages: updateMessage(state, d.messageId, (m) => ({ ...m, feedback: d.rating === null ? null : { rating: d.rating, comment: d.comment, at: d.at } })) };
    }
    default:
      return state;
  }
}

export interface ConversationScope {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

/** A conversation is its user's own, in the workspace it was started in. */
export function conversationVisibleTo(state: Pick<ConversationState, 'userId' | 'orgId' | 'workspaceId'>, scope: ConversationScope): boolean {
  return state.userId === scope.userId && state.orgId === scope.orgId && state.workspaceId === scope.workspaceId;
}
