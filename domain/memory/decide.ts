import { DomainError, type Decider } from '../shared/decider.js';
import { memoryEventSchemas, type MemoryEmbedding, type MemoryEvent } from './events.js';
import { SCOPE_FIELDS, type MemoryMetadata, type MemoryScope } from './limits.js';

/** Whose memories these are: the caller's tenancy, as flows have it (flowScopeOf). */
export interface MemoryTenant {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

export interface MemorySubject {
  userId: string | null;
  agentId: string | null;
  runId: string | null;
}

export interface MemoryState {
  exists: boolean;
  deleted: boolean;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  subject: MemorySubject;
  text: string;
  metadata: MemoryMetadata;
  createdAt: string;
  updatedAt: string;
  /** Revision of the stream's last event (-1 before the first). */
  version: number;
}

interface Author {
  by: string | null;
  source: string;
  at: string;
}

export type MemoryCommand =
  | ({ type: 'SaveMemory'; memoryId: string; text: string; metadata: MemoryMetadata; subject: MemorySubject; tenant: MemoryTenant; embedding: MemoryEmbedding | null } & Author)
  | ({ type: 'UpdateMemory'; memoryId: string; tenant: MemoryTenant; scope?: MemoryScope; text?: string; metadata?: MemoryMetadata; embedding?: MemoryEmbedding | null } & Author)
  | ({ type: 'DeleteMemory'; memoryId: string; tenant: MemoryTenant; scope?: MemoryScope } & Author);

/** Same rule as flows: the organization's workspace shares them; a personal one is its owner's alone. */
export function isMemoryVisibleTo(memory: { ownerId: string; orgId: string | null; workspaceId: string | null }, tenant: MemoryTenant): boolean {
  if (memory.orgId !== tenant.orgId || memory.workspaceId !== tenant.workspaceId) return false;
  return memory.orgId !== null || memory.ownerId === tenant.userId;
}

export const memoryNotFound = () => new DomainError('MEMORY_NOT_FOUND', 'memory not found', 'not_found');

/** Every scope field the caller named must match the memory's (a mismatch is "not found", like another tenant's). */
function matchesScope(subject: MemorySubject, scope: MemoryScope | undefined): boolean {
  return SCOPE_FIELDS.every((f) => scope?.[f] === undefined || scope[f] === subject[f]);
}

function requireLive(state: MemoryState, tenant: MemoryTenant, scope: MemoryScope | undefined): void {
  if (!state.exists || state.deleted || !isMemoryVisibleTo(state, tenant) || !matchesScope(state.subject, scope)) throw memoryNotFound();
}

const sameMetadata = (a: MemoryMetadata, b: MemoryMetadata) => {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && Object.is(a[k], b[k]));
};

export const memoryDecider: Decider<MemoryCommand, MemoryState, MemoryEvent> = {
  initialState: { exists: false, deleted: false, ownerId: '', orgId: null, workspaceId: null, subject: { userId: null, agentId: null, runId: null }, text: '', metadata: {}, createdAt: '', updatedAt: '', version: -1 },
  eventSchemas: memoryEventSchemas,
  evolve(state, event) {
    switch (event.type) {
      case 'MemorySaved': {
        const d = event.data;
        return { exists: true, deleted: false, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, subject: d.subject, text: d.text, metadata: d.metadata, createdAt: d.at, updatedAt: d.at, version: state.version + 1 };
      }
      case 'MemoryUpdated':
        return { ...state, text: event.data.text, metadata: event.data.metadata, updatedAt: event.data.at, version: state.version + 1 };
      case 'MemoryDeleted':
        return { ...state, deleted: true, updatedAt: event.data.at, version: state.version + 1 };
      default:
        return state;
    }
  },
  decide(command, state) {
    const author = { by: command.by, source: command.source, at: command.at };
    switch (command.type) {
      case 'SaveMemory': {
        if (state.exists) throw new DomainError('MEMORY_EXISTS', `memory ${command.memoryId} already exists`, 'conflict');
        const { tenant } = command;
        return [
          {
            type: 'MemorySaved',
            data: {
              memoryId: command.memoryId, text: command.text, metadata: command.metadata, subject: command.subject,
              ownerId: tenant.userId, orgId: tenant.orgId, workspaceId: tenant.workspaceId, embedding: command.embedding, ...author,
            },
          },
        ];
      }
      case 'UpdateMemory': {
        requireLive(state, command.tenant, command.scope);
        const text = command.text ?? state.text;
        const metadata = command.metadata ?? state.metadata;
        if (text === state.text && sameMetadata(metadata, state.metadata)) return [];
        const textChanged = text !== state.text;
        return [
          {
            type: 'MemoryUpdated',
            data: {
              memoryId: command.memoryId, previousText: state.text, text, previousMetadata: state.metadata, metadata,
              ...(textChanged && command.embedding !== undefined ? { embedding: command.embedding } : {}), ...author,
            },
          },
        ];
      }
      case 'DeleteMemory':
        requireLive(state, command.tenant, command.scope);
        return [{ type: 'MemoryDeleted', data: { memoryId: command.memoryId, previousText: state.text, previousMetadata: state.metadata, ...author } }];
    }
  },
};

export const memoryStreamId = (memoryId: string) => `memory-${memoryId}`;
