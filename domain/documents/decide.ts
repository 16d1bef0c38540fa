import { DomainError } from '../shared/decider.js';
import type { DocumentEvent, IndexSpecData } from './events.js';
import { enforceSchema } from './schema.js';
import { isCollectionVisibleTo, type CollectionScope, type CollectionState } from './state.js';

type Base = { scope: CollectionScope; at: string };
/**
 * The collection aggregate. Its document commands (Insert/Update/DeleteDocument) are how documents
 * were written before they got streams of their own (decide-document.ts); the commands layer no
 * longer sends them, and they stay as the definition of the events they produced, which are still
 * folded here (the state's `docs` and `count` are those documents' entries).
 */
export type CollectionCommand =
  | (Base & { type: 'CreateCollection'; collectionId: string; name: string; schema: string | null; indexes: IndexSpecData[] })
  | (Base & { type: 'InsertDocument'; documentId: string; document: Record<string, unknown>; bytes: number; maxDocuments: number })
  | (Base & { type: 'UpdateDocument'; documentId: string; document: Record<string, unknown>; bytes: number; update: string | null; basedOn: number })
  | (Base & { type: 'DeleteDocument'; documentId: string })
  | (Base & { type: 'DeleteCollection'; /** Live documents, when kept outside this stream (slot claims). */ documents?: number });

const notFound = () => new DomainError('COLLECTION_NOT_FOUND', 'collection not found', 'not_found');
const docNotFound = (id: string) => new DomainError('DOCUMENT_NOT_FOUND', `document ${id} not found`, 'not_found');

function assertLive(state: CollectionState, scope: CollectionScope): void {
  if (!state.exists || state.deleted || !isCollectionVisibleTo(state, scope)) throw notFound();
}

export function decideCollection(command: CollectionCommand, state: CollectionState): DocumentEvent[] {
  if (command.type === 'CreateCollection') {
    if (state.exists) throw new DomainError('COLLECTION_EXISTS', `collection ${command.collectionId} already exists`, 'conflict');
    const { collectionId, name, schema, indexes, scope, at } = command;
    return [{ type: 'CollectionCreated', data: { collectionId, name, ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId, schema, indexes, createdAt: at } }];
  }
  assertLive(state, command.scope);
  const count = state.count;
  switch (command.type) {
    case 'InsertDocument': {
      const previous = state.docs.get(command.documentId);
      if (previous?.live) {
        throw new DomainError('DOCUMENT_EXISTS', `a document with id ${command.documentId} already exists`, 'conflict', { field: 'body.id' });
      }
      if (count >= command.maxDocuments) {
        throw new DomainError('COLLECTION_FULL', `a collection holds at most ${command.maxDocuments} documents`, 'conflict');
      }
      enforceSchema(state.schema, command.document);
      return [{ type: 'DocumentInserted', data: { documentId: command.documentId, document: command.document, size: command.bytes, previousRevision: previous?.r ?? null, count: count + 1, bytes: state.bytes + command.bytes, at: command.at } }];
    }
    case 'UpdateDocument': {
      const entry = state.docs.get(command.documentId);
      if (!entry?.live) throw docNotFound(command.documentId);
      if (entry.r !== command.basedOn) throw new DomainError('DOCUMENT_MOVED', `document ${command.documentId} changed since revision ${command.basedOn}`, 'conflict');
      enforceSchema(state.schema, command.document);
      return [{
        type: 'DocumentUpdated',
        data: { documentId: command.documentId, document: command.document, size: command.bytes, update: command.update, previousRevision: entry.r, count, bytes: state.bytes - entry.b + command.bytes, at: command.at },
      }];
    }
    case 'DeleteDocument': {
      const entry = state.docs.get(command.documentId);
      if (!entry?.live) throw docNotFound(command.documentId);
      return [{ type: 'DocumentDeleted', data: { documentId: command.documentId, previousRevision: entry.r, count: count - 1, bytes: state.bytes - entry.b, at: command.at } }];
    }
    case 'DeleteCollection':
      return [{ type: 'CollectionDeleted', data: { name: state.name ?? '', documents: command.documents ?? count, at: command.at } }];
  }
}
