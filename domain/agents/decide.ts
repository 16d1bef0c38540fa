import { DomainError, decideByType } from '../shared/decider.js';
import type { AgentDefinition, AgentEvent, AgentFinishReason, AgentSessionEvent, AgentUsage } from './events.js';
import type { AgentSessionState, AgentState } from './state.js';

export type AgentCommand =
  | { type: 'CreateAgent'; agentId: string; definition: AgentDefinition; ownerId: string; orgId: string | null; workspaceId: string | null; at: string }
  | { type: 'UpdateAgent'; definition: AgentDefinition; at: string }
  | { type: 'DeleteAgent'; at: string };

export const agentNotFound = () => new DomainError('AGENT_NOT_FOUND', 'agent not found', 'not_found');
export const sessionNotFound = () => new DomainError('SESSION_NOT_FOUND', 'session not found', 'not_found');

export const decideAgent = decideByType<AgentCommand, AgentState, AgentEvent>({
  CreateAgent(c, s) {
    if (s.exists) throw new DomainError('AGENT_EXISTS', `agent ${c.agentId} already exists`, 'conflict');
    return [{ type: 'AgentCreated', data: { ...c.definition, agentId: c.agentId, ownerId: c.ownerId, orgId: c.orgId, workspaceId: c.workspaceId, at: c.at } }];
  },
  UpdateAgent(c, s) {
    if (!s.exists || s.deleted) throw agentNotFound();
    return [{ type: 'AgentUpdated', data: { ...c.definition, at: c.at } }];
  },
  DeleteAgent(c, s) {
    if (!s.exists || s.deleted) throw agentNotFound();
    return [{ type: 'AgentDeleted', data: { at: c.at } }];
  },
});

/** The events a running turn records as it goes (the loop's output). */
export type AgentTurnEvent = Extract<AgentSessionEvent, { type: 'AgentTextDelta' | 'AgentStepCompleted' | 'AgentToolCalled' | 'AgentToolResulted' }>;

export type AgentSessionCommand =
  | { type: 'CreateSession'; sessionId: string; agentId: string; title: string | null; ownerId: string; orgId: string | null; workspaceId: string | null; at: string }
  | {
      type: 'ReceiveMessage';
      messageId: string;
      content: string;
      attachments: Array<{ name: string; mediaType: string; content: string }>;
      runner: string;
      deadline: string;
      context: { budgetTokens: number; estimatedTokens: number; includedMessageIds: string[]; droppedMessageIds: string[] };
      at: string;
    }
  | { type: 'RecordTurn'; messageId: string; events: AgentTurnEvent[]; at: string }
  | { type: 'RequestCancel'; messageId: string; by: string | null; at: string }
  | {
      type: 'CompleteMessage';
      messageId: string;
      text: string;
      finishReason: AgentFinishReason;
      iterations: number;
      toolCalls: number;
      usage: AgentUsage;
      cost: number;
      error: { code: string; message: string } | null;
      at: string;
    }
  | { type: 'DeleteSession'; at: string };

function live(s: AgentSessionState) {
  if (!s.exists || s.deleted) throw sessionNotFound();
}

export const messageNotFound = () => new DomainError('MESSAGE_NOT_FOUND', 'message not found', 'not_found');

export const decideAgentSession = decideByType<AgentSessionCommand, AgentSessionState, AgentSessionEvent>({
  CreateSession(c, s) {
    if (s.exists) throw new DomainError('SESSION_EXISTS', `session ${c.sessionId} already exists`, 'conflict');
    const { type: _type, ...data } = c;
    return [{ type: 'AgentSessionCreated', data }];
  },
  ReceiveMessage(c, s) {
    live(s);
    if (s.running) throw new DomainError('SESSION_BUSY', `the session is answering message ${s.running}; wait for it or cancel it`, 'conflict', { messageId: s.running });
    if (s.messages.some((m) => m.messageId === c.messageId)) throw new DomainError('MESSAGE_EXISTS', `message ${c.messageId} already exists`, 'conflict');
    const { type: _type, ...data } = c;
    return [{ type: 'AgentMessageReceived', data }];
  },
  RecordTurn(c, s) {
    live(s);
    // Only the running turn records; a turn already ended (cancelled, recovered) records nothing more.
    if (s.running !== c.messageId) return [];
    return c.events.filter((e) => e.data.messageId === c.messageId);
  },
  RequestCancel(c, s) {
    live(s);
    const message = s.messages.find((m) => m.messageId === c.messageId);
    if (!message) throw messageNotFound();
    if (message.completed || message.cancelRequested) return [];
    return [{ type: 'AgentMessageCancelRequested', data: { messageId: c.messageId, by: c.by, at: c.at } }];
  },
  CompleteMessage(c, s) {
    if (!s.exists) throw sessionNotFound();
    const message = s.messages.find((m) => m.messageId === c.messageId);
    if (!message) throw messageNotFound();
    if (message.completed) return [];
    const { type: _type, ...data } = c;
    return [{ type: 'AgentMessageCompleted', data }];
  },
  DeleteSession(c, s) {
    live(s);
    return [{ type: 'AgentSessionDeleted', data: { at: c.at } }];
  },
});
