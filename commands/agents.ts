import {
  agentDecider, agentNotFound, agentSessionDecider, agentSessionStreamId, agentStreamId, isAgentVisibleTo, sessionNotFound,
  type AgentDefinition, type AgentScope, type AgentSessionState, type AgentState,
} from '../domain/agents/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, loadState, type CommandContext } from './handle.js';

/** Agents and their sessions: definitions in `agent-<id>`, sessions in `agentsession-<id>` (turns: commands/agents-messages.ts). */

export function agentScopeOf(principal: { userId: string; orgId: string | null; workspaceId: string | null }): AgentScope {
  return { userId: principal.userId, orgId: principal.orgId, workspaceId: principal.workspaceId };
}

/** The agent as folded from its stream; another tenant's or a deleted one is AGENT_NOT_FOUND. */
export async function visibleAgent(store: EventStore, agentId: string, scope: AgentScope): Promise<{ state: AgentState & AgentDefinition; revision: number }> {
  const { state, revision } = await loadState(store, agentStreamId(agentId), agentDecider);
  if (!state.exists || state.deleted || !isAgentVisibleTo(state, scope)) throw agentNotFound();
  return { state: state as AgentState & AgentDefinition, revision };
}

export function createAgent(store: EventStore, context: CommandContext, agentId: string, definition: AgentDefinition, scope: AgentScope) {
  return handleAtContextTime(store, context, agentStreamId(agentId), agentDecider, { type: 'CreateAgent', agentId, definition, ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId });
}

export async function updateAgent(store: EventStore, context: CommandContext, agentId: string, definition: AgentDefinition, scope: AgentScope, expectedRevision?: number) {
  await visibleAgent(store, agentId, scope);
  return handleAtContextTime(store, context, agentStreamId(agentId), agentDecider, { type: 'UpdateAgent', definition }, expectedRevision);
}

export async function deleteAgent(store: EventStore, context: CommandContext, agentId: string, scope: AgentScope) {
  await visibleAgent(store, agentId, scope);
  return handleAtContextTime(store, context, agentStreamId(agentId), agentDecider, { type: 'DeleteAgent' });
}

export function loadAgentSession(store: EventStore, sessionId: string) {
  return loadState(store, agentSessionStreamId(sessionId), agentSessionDecider);
}

/** The session of that agent, visible to the scope (else SESSION_NOT_FOUND). */
export async function visibleSession(store: EventStore, agentId: string, sessionId: string, scope: AgentScope): Promise<{ state: AgentSessionState; revision: number }> {
  const loaded = await loadAgentSession(store, sessionId);
  const s = loaded.state;
  if (!s.exists || s.deleted || s.agentId !== agentId || !isAgentVisibleTo(s, scope)) throw sessionNotFound();
  return loaded;
}

export async function createAgentSession(store: EventStore, context: CommandContext, agentId: string, sessionId: string, title: string | null, scope: AgentScope) {
  await visibleAgent(store, agentId, scope);
  return handleAtContextTime(store, context, agentSessionStreamId(sessionId), agentSessionDecider, {
    type: 'CreateSession', sessionId, agentId, title, ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId,
  });
}
