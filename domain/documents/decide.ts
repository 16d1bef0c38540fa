import { DomainError, type Decider } from '../shared/decider.js';
import type { DocumentEvent, IndexSpecData } from './events.js';
import { documentEventSchemas } from './events.js';
import { PersistentMap } from './pmap.js';
import { enforceSchema } from './schema.js';

/** Who asks: personal collections are their owner's; organization ones belong to the workspace (as flows). */
export interface CollectionScope {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

/** Per document id: the revision of the event that last wrote it, its size, and whether it is live
 * (deleted ids stay as tombstones so their history stays reachable). */
export interface DocumentEntry {
  r: number;
  b: number;
  live: boolean;
}

/**
 * The decision state stays small whatever the collection holds: the live document ids with their
 * last revision and size (a persistent map, so folding 100,000 inserts stays linear), never the
 * documents themselves. A change based on a document's content (update operators) reads that
 * document from the log at its last revision and states it in the command (`basedOn`); the decider
 * refuses it if the document moved on since (DOCUMENT_MOVED, retried by the command layer).
 */
export interface CollectionState {
  exists: boolean;
  deleted: boolean;
  name: string | null;
  ownerId: string | null;
  orgId: string | null;
  workspaceId: string | null;
  schema: string | null;
  indexes: IndexSpecData[];
  docs: PersistentMap<DocumentEntry>;
  /** Live documents. */
  count: number;
  bytes: number;
  /** Revision of the last folded event (-1 before the first); documents' `r` refer to it. */
  revision: number;
}

type Base = { scope: CollectionScope; at: string };
export type CollectionCommand =
  | (Base & { type: 'CreateCollection'; collectionId: string; name: string; schema: string | null; indexes: IndexSpecData[] })
  | (Base & { type: 'InsertDocument'; documentId: string; document: Record<string, unknown>; bytes: number; maxDocuments: number })
  | (Base & { type: 'UpdateDocument'; documentId: string; document: Record<string, unknown>; bytes: number; update: string | null; basedOn: number })
  | (Base & { type: 'DeleteDocument'; documentId: string })
  | (Base & { type: 'DeleteCollection' });

export const initialCollectionState: CollectionState = {
  exists: false, deleted: false, name: null, ownerId: null, orgId: null, workspaceId: null,
  schema: null, indexes: [], docs: PersistentMap.empty(), count: 0, bytes: 0, revision: -1,
};

export function isCollectionVisibleTo(c: { ownerId: string | null; orgId: string | null; workspaceId: string | null }, scope: CollectionScope): boolean {
  if (c.orgId !== scope.orgId || c.workspaceId !== scope.workspaceId) return false;
  return c.orgId !== null || c.ownerId === scope.userId;
}

export function evolveCollection(state: CollectionState, event: DocumentEvent): CollectionState {
  const revision = state.revision + 1;
  switch (event.type) {
    case 'CollectionCreated': {
      const d = event.data;
      return { ...state, exists: true, name: d.name, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, schema: d.schema, indexes: d.indexes, revision };
    }
    case 'DocumentInserted':
    case 'DocumentUpdated':
      return { ...state, docs: state.docs.set(event.data.documentId, { r: revision, b: event.data.size, live: true }), count: event.data.count, bytes: event.data.bytes, revision };
    case 'DocumentDeleted':
      return { ...state, docs: state.docs.set(event.data.documentId, { r: revision, b: 0, live: false }), count: event.data.count, bytes: event.data.bytes, revision };
    case 'CollectionDeleted':
      return { ...state, deleted: true, count: 0, bytes: 0, revision };
    default:
      return { ...state, revision };
  }
}


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
      return [{ type: 'CollectionDeleted', data: { name: state.name ?? '', documents: count, at: command.at } }];
  }
}

export const collectionDecider: Decider<CollectionCommand, CollectionState, DocumentEvent> = {
  initialState: initialCollectionState,
  eventSchemas: documentEventSchemas,
  evolve: evolveCollection,
  decide: decideCollection,
};
