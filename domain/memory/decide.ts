import { DomainError } from '../shared/decider.js';
import type { MemoryEmbedding, MemoryEvent } from './events.js';
import { SCOPE_FIELDS, type MemoryMetadata, type MemoryScope } from './limits.js';
import type { MemoryState, MemorySubject, MemoryTenant } from './state.js';

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

export function decideMemory(command: MemoryCommand, state: MemoryState): MemoryEvent[] {
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
}
