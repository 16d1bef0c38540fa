import type { AgentDefinition, AgentEvent, AgentFinishReason, AgentSessionEvent, AgentUsage } from './events.js';

export interface AgentState extends Partial<AgentDefinition> {
  exists: boolean;
  deleted: boolean;
  agentId: string | null;
  ownerId: string | null;
  orgId: string | null;
  workspaceId: string | null;
  createdAt: string | null;
  updatedAt: string | null;
}

export const initialAgentState: AgentState = { exists: false, deleted: false, agentId: null, ownerId: null, orgId: null, workspaceId: null, createdAt: null, updatedAt: null };

export function evolveAgent(state: AgentState, event: AgentEvent): AgentState {
  switch (event.type) {
    case 'AgentCreated': {
      const { agentId, ownerId, orgId, workspaceId, at, ...definition } = event.data;
      return { ...definition, exists: true, deleted: false, agentId, ownerId, orgId, workspaceId, createdAt: at, updatedAt: at };
    }
    case 'AgentUpdated': {
      const { at, ...definition } = event.data;
      return { ...state, ...definition, updatedAt: at };
    }
    case 'AgentDeleted':
      return { ...state, deleted: true, updatedAt: event.data.at };
    default:
      return state;
  }
}

/** Who sees a resource: the same organization and workspace; in the personal workspace only its owner. */
export interface AgentScope {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

export function isAgentVisibleTo(owned: { ownerId: string | null; orgId: string | null; workspaceId: string | null }, scope: AgentScope): boolean {
  if (owned.orgId !== scope.orgId || owned.workspaceId !== scope.workspaceId) return false;
  return owned.orgId !== null || owned.ownerId === scope.userId;
}

export interface AgentStepState {
  iteration: number;
  text: string;
  toolCalls: Array<{ id: string; name: string; input: Record<string, unknown> }>;
}

export interface AgentToolCallState {
  toolCallId: string;
  iteration: number;
  name: string;
  input: Record<string, unknown>;
  calledAt: string;
  result: { content: string; isError: boolean; skipped: string | null; durationMs: number; at: string } | null;
}

export interface AgentMessageState {
  messageId: string;
  content: string;
  attachments: Array<{ name: string; mediaType: string; content: string }>;
  receivedAt: string;
  /** Revision of AgentMessageReceived in the session stream: where the turn's events start. */
  fromRevision: number;
  context: { budgetTokens: number; estimatedTokens: number; includedMessageIds: string[]; droppedMessageIds: string[] };
  runner: string;
  deadline: string;
  /** Text streamed so far (every step's, as the deltas wrote it). */
  streamedText: string;
  steps: AgentStepState[];
  toolCalls: AgentToolCallState[];
  usage: AgentUsage;
  cost: number;
  cancelRequested: boolean;
  completed: { text: string; finishReason: AgentFinishReason; iterations: number; toolCalls: number; error: { code: string; message: string } | null; at: string } | null;
}

export interface AgentSessionState {
  exists: boolean;
  deleted: boolean;
  sessionId: string | null;
  agentId: string | null;
  title: string | null;
  ownerId: string | null;
  orgId: string | null;
  workspaceId: string | null;
  createdAt: string | null;
  updatedAt: string | null;
  /** The message whose turn is running, if any. */
  running: string | null;
  messages: AgentMessageState[];
  /** Revision of the session stream's last event (folded). */
  revision: number;
}

export const initialAgentSessionState: AgentSessionState = {
  exists: false,
  deleted: false,
  sessionId: null,
  agentId: null,
  title: null,
  ownerId: null,
  orgId: null,
  workspaceId: null,
  createdAt: null,
  updatedAt: null,
  running: null,
  messages: [],
  revision: -1,
};

const zeroUsage: AgentUsage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 0 };

function withMessage(state: AgentSessionState, messageId: string, change: (m: AgentMessageState) => AgentMessageState): AgentSessionState {
  const index = state.messages.findIndex((m) => m.messageId === messageId);
  if (index === -1) return state;
  const messages = state.messages.slice();
  messages[index] = change(messages[index]);
  return { ...state, messages };
}

export function evolveAgentSession(state: AgentSessionState, event: AgentSessionEvent): AgentSessionState {
  const next = evolveSession(state, event);
  return { ...next, revision: state.revision + 1 };
}

function evolveSession(state: AgentSessionState, event: AgentSessionEvent): AgentSessionState {
  switch (event.type) {
    case 'AgentSessionCreated': {
      const d = event.data;
      return { ...state, exists: true, sessionId: d.sessionId, agentId: d.agentId, title: d.title, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, createdAt: d.at, updatedAt: d.at };
    }
    case 'AgentMessageReceived': {
      const d = event.data;
      const message: AgentMessageState = {
        messageId: d.messageId,
        content: d.content,
        attachments: d.attachments,
        receivedAt: d.at,
        fromRevision: state.revision + 1,
        context: d.context,
        runner: d.runner,
        deadline: d.deadline,
        streamedText: '',
        steps: [],
        toolCalls: [],
        usage: zeroUsage,
        cost: 0,
        cancelRequested: false,
        completed: null,
      };
      return { ...state, running: d.messageId, messages: [...state.messages, message], updatedAt: d.at };
    }
    case 'AgentTextDelta':
      return withMessage(state, event.data.messageId, (m) => ({ ...m, streamedText: m.streamedText + event.data.text }));
    case 'AgentStepCompleted': {
      const d = event.data;
      return withMessage(state, d.messageId, (m) => ({
        ...m,
        steps: [...m.steps, { iteration: d.iteration, text: d.text, toolCalls: d.toolCalls }],
        usage: {
          promptTokens: m.usage.promptTokens + d.usage.promptTokens,
          completionTokens: m.usage.completionTokens + d.usage.completionTokens,
          cachedTokens: m.usage.cachedTokens + d.usage.cachedTokens,
          cacheWriteTokens: m.usage.cacheWriteTokens + d.usage.cacheWriteTokens,
          totalTokens: m.usage.totalTokens + d.usage.totalTokens,
        },
        cost: m.cost + d.cost,
      }));
    }
    case 'AgentToolCalled': {
      const d = event.data;
      return withMessage(state, d.messageId, (m) => ({ ...m, toolCalls: [...m.toolCalls, { toolCallId: d.toolCallId, iteration: d.iteration, name: d.name, input: d.input, calledAt: d.at, result: null }] }));
    }
    case 'AgentToolResulted': {
      const d = event.data;
      return withMessage(state, d.messageId, (m) => ({
        ...m,
        toolCalls: m.toolCalls.map((c) => (c.toolCallId === d.toolCallId && c.iteration === d.iteration ? { ...c, result: { content: d.content, isError: d.isError, skipped: d.skipped, durationMs: d.durationMs, at: d.at } } : c)),
      }));
    }
    case 'AgentMessageCancelRequested':
      return withMessage(state, event.data.messageId, (m) => ({ ...m, cancelRequested: true }));
    case 'AgentMessageCompleted': {
      const d = event.data;
      const next = withMessage(state, d.messageId, (m) => ({
        ...m,
        usage: d.usage,
        cost: d.cost,
        completed: { text: d.text, finishReason: d.finishReason, iterations: d.iterations, toolCalls: d.toolCalls, error: d.error, at: d.at },
      }));
      return { ...next, running: state.running === d.messageId ? null : state.running, updatedAt: d.at };
    }
    case 'AgentSessionDeleted':
      return { ...state, deleted: true, running: null, updatedAt: event.data.at };
    default:
      return state;
  }
}
