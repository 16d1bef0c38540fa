import type { RecordedEvent } from '../domain/shared/events.js';
import type { AgentEvent, AgentScope, AgentSessionEvent } from '../domain/agents/index.js';
import type { Doc, Filter, Page, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

/** The agents list and each agent's sessions list (details are folded from the streams by the commands). */
export interface AgentDoc extends Doc {
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  name: string;
  /** The definition as JSON text (tool schemas may hold keys a document store refuses, e.g. `$schema`). */
  definition: string;
  deleted: boolean;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface AgentSessionDoc extends Doc {
  agentId: string;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  title: string | null;
  messageCount: number;
  running: string | null;
  lastFinishReason: string | null;
  deleted: boolean;
  version: number;
  createdAt: string;
  updatedAt: string;
}

const AGENTS = 'agents';
const SESSIONS = 'agent_sessions';

export const agentsProjector: Projector = {
  name: 'agents',
  categories: ['agent', 'agentsession'],
  ...ownedCollections({
    [AGENTS]: [{ keys: { orgId: 1, workspaceId: 1, updatedAt: -1 } }],
    [SESSIONS]: [{ keys: { agentId: 1, updatedAt: -1 } }],
  }),
  async project(recorded, store) {
    if (recorded.streamId.startsWith('agentsession-')) return projectSession(recorded, store);
    const event = recorded as RecordedEvent & AgentEvent;
    const agents = store.collection<AgentDoc>(AGENTS);
    const id = recorded.streamId.slice('agent-'.length);
    const newer = { _id: id, version: { $lt: recorded.revision } };
    switch (event.type) {
      case 'AgentCreated': {
        const { agentId: _a, ownerId, orgId, workspaceId, at, ...definition } = event.data;
        await agents.replaceOne(
          { _id: id },
          { _id: id, ownerId, orgId, workspaceId, name: definition.name, definition: JSON.stringify(definition), deleted: false, version: recorded.revision, createdAt: at, updatedAt: at },
          { upsert: true },
        );
        return;
      }
      case 'AgentUpdated': {
        const { at, ...definition } = event.data;
        await agents.updateOne(newer, { $set: { name: definition.name, definition: JSON.stringify(definition), version: recorded.revision, updatedAt: at } });
        return;
      }
      case 'AgentDeleted':
        await agents.updateOne(newer, { $set: { deleted: true, version: recorded.revision, updatedAt: event.data.at } });
        return;
    }
  },
};

async function projectSession(recorded: RecordedEvent, store: ReadStore) {
  const event = recorded as RecordedEvent & AgentSessionEvent;
  const sessions = store.collection<AgentSessionDoc>(SESSIONS);
  const id = recorded.streamId.slice('agentsession-'.length);
  const newer = { _id: id, version: { $lt: recorded.revision } };
  switch (event.type) {
    case 'AgentSessionCreated': {
      const d = event.data;
      await sessions.replaceOne(
        { _id: id },
        { _id: id, agentId: d.agentId, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, title: d.title, messageCount: 0, running: null, lastFinishReason: null, deleted: false, version: recorded.revision, createdAt: d.at, updatedAt: d.at },
        { upsert: true },
      );
      return;
    }
    case 'AgentMessageReceived':
      await sessions.updateOne(newer, { $inc: { messageCount: 1 }, $set: { running: event.data.messageId, version: recorded.revision, updatedAt: event.data.at } });
      return;
    case 'AgentMessageCompleted':
      await sessions.updateOne(newer, { $set: { running: null, lastFinishReason: event.data.finishReason, version: recorded.revision, updatedAt: event.data.at } });
      return;
    case 'AgentSessionDeleted':
      await sessions.updateOne(newer, { $set: { deleted: true, running: null, version: recorded.revision, updatedAt: event.data.at } });
      return;
    default:
      // Deltas, steps and tool events change nothing listed; the version still moves on.
      await sessions.updateOne(newer, { $set: { version: recorded.revision } });
  }
}

export const agentProjectors: Projector[] = [agentsProjector];

/** The tenant part of every agent query (the same rule as isAgentVisibleTo). */
function tenantFilter(scope: AgentScope): Filter {
  const filter: Filter = { orgId: scope.orgId, workspaceId: scope.workspaceId };
  if (scope.orgId === null) filter.ownerId = scope.userId;
  return filter;
}

export function listAgents(store: ReadStore, scope: AgentScope, options: { limit: number; cursor?: string | null }): Promise<Page<AgentDoc>> {
  return store.collection<AgentDoc>(AGENTS).page({ ...tenantFilter(scope), deleted: false }, { sort: { updatedAt: -1 }, limit: options.limit, cursor: options.cursor ?? null });
}

export function listAgentSessions(store: ReadStore, scope: AgentScope, agentId: string, options: { limit: number; cursor?: string | null }): Promise<Page<AgentSessionDoc>> {
  return store.collection<AgentSessionDoc>(SESSIONS).page({ ...tenantFilter(scope), agentId, deleted: false }, { sort: { updatedAt: -1 }, limit: options.limit, cursor: options.cursor ?? null });
}
