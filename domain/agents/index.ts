import { decider, type Decider } from '../shared/decider.js';
import { decideAgent, decideAgentSession, type AgentCommand, type AgentSessionCommand } from './decide.js';
import { agentEventSchemas, agentSessionEventSchemas, type AgentEvent, type AgentSessionEvent } from './events.js';
import { evolveAgent, evolveAgentSession, initialAgentSessionState, initialAgentState, type AgentSessionState, type AgentState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';

/**
 * Agents: a definition (provider, model, instructions, tool references, limits) in `agent-<id>`,
 * and each chat session in its own `agentsession-<id>` stream, where every turn, model step, tool
 * call and result is an event: the history the model sees next turn is folded from it.
 */
export const agentDecider: Decider<AgentCommand, AgentState, AgentEvent> = decider(initialAgentState, evolveAgent, decideAgent, agentEventSchemas);
export const agentSessionDecider: Decider<AgentSessionCommand, AgentSessionState, AgentSessionEvent> = decider(initialAgentSessionState, evolveAgentSession, decideAgentSession, agentSessionEventSchemas);
