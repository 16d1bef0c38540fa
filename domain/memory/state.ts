import type { MemoryEvent } from './events.js';
import type { MemoryMetadata } from './limits.js';

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

export const initialMemoryState: MemoryState = { exists: false, deleted: false, ownerId: '', orgId: null, workspaceId: null, subject: { userId: null, agentId: null, runId: null }, text: '', metadata: {}, createdAt: '', updatedAt: '', version: -1 };

export function evolveMemory(state: MemoryState, event: MemoryEvent): MemoryState {
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
}

export const memoryStreamId = (memoryId: string) => `memory-${memoryId}`;
